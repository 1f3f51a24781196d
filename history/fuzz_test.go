package history_test

import (
	"testing"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/orchestrate"
)

// Whatever a user types after --search is text: it never makes the
// full-text query fail.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"pool", `"`, `a OR b`, "NEAR(a b)", "col:x", "-x", "*", "^a", "a AND", "(", "\x00", "é ü", `""""`} {
		f.Add(s)
	}
	d, err := history.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { d.Close() })
	rec := &orchestrate.Record{ID: "a1", StartedAt: time.Now(), Task: "the pool", Answer: "was exhausted"}
	if err := d.IndexRecord(rec, "/tmp/a1.json"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := d.List(history.Filter{Search: s}); err != nil {
			t.Errorf("search %q: %v", s, err)
		}
	})
}
