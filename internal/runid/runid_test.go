package runid

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	at := time.Date(2026, 12, 1, 14, 45, 0, 0, time.FixedZone("CET", 3600))
	want := regexp.MustCompile(`^20261201T134500Z-[0-9a-f]{8}$`)
	a, b := New(at), New(at)
	if !want.MatchString(a) || !want.MatchString(b) {
		t.Fatalf("New = %q, %q; want %s", a, b, want)
	}
	if a == b {
		t.Errorf("two ids in one second are the same: %q", a)
	}
}

func TestCheck(t *testing.T) {
	for _, id := range []string{"20261201T100203Z-abcdef", New(time.Now()), "by_hand-1"} {
		if err := Check(id); err != nil {
			t.Errorf("Check(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "..", "../x", "a/b", `a\b`, "a.b", "a b", strings.Repeat("a", 65)} {
		if err := Check(id); !errors.Is(err, ErrBad) {
			t.Errorf("Check(%q) = %v, want ErrBad", id, err)
		}
	}
}
