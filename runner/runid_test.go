package runner

import (
	"regexp"
	"testing"
	"time"
)

// baton run and baton ask name their runs alike: a UTC time to the second
// and eight hex digits (four random bytes), so tools that list or parse
// run ids see one format.
func TestNewIDFormat(t *testing.T) {
	want := regexp.MustCompile(`^20261201T134500Z-[0-9a-f]{8}$`)
	at := time.Date(2026, 12, 1, 14, 45, 0, 0, time.FixedZone("CET", 3600))
	seen := map[string]bool{}
	for range 100 {
		id := newID(at)
		if !want.MatchString(id) {
			t.Fatalf("newID = %q, want %s", id, want)
		}
		seen[id] = true
	}
	if len(seen) < 99 {
		t.Errorf("100 ids in one second gave %d distinct", len(seen))
	}
}

// Runs recorded by earlier batons (three random bytes) still load.
func TestCheckRunIDAcceptsOldAndNew(t *testing.T) {
	for _, id := range []string{"20261201T100203Z-abcdef", "20261201T100203Z-abcdef01", newID(time.Now())} {
		if err := CheckRunID(id); err != nil {
			t.Errorf("CheckRunID(%q) = %v", id, err)
		}
	}
}
