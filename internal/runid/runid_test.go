package runid

import (
	"regexp"
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
