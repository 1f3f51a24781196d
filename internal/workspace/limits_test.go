package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// deepRel is a path of n segments of 60 bytes each: at n = 64 it is at
// both limits' edge.
func deepRel(n int) string {
	seg := strings.Repeat("d", 59)
	return strings.Repeat(seg+"/", n-1) + seg
}

// The work of a read or a write grows with the path's depth, not its
// square: a path four times as deep costs under six times the
// allocations. Keying every prefix again at every segment, as locate once
// did, costs over ten times. protect: patterns of every shape are on.
func TestDeepPathWorkIsLinear(t *testing.T) {
	dir := t.TempDir()
	ws := newWS(t, dir)
	ws, err := ws.Restrict(Rules{Deny: []string{"secret/**", "private/*.md", "vendor", "{a,b}/c"}, ReadOnly: []string{"docs/*"}, Write: []string{"**"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"write", "read"} {
		allocs := func(n int) float64 {
			rel := deepRel(n-1) + "/f"
			if err := ws.WriteFile(rel, []byte("x\n")); err != nil {
				t.Fatal(err)
			}
			return testing.AllocsPerRun(5, func() {
				var err error
				if op == "write" {
					err = ws.WriteFile(rel, []byte("x\n"))
				} else {
					_, err = ws.ReadFile(rel, 0)
				}
				if err != nil {
					t.Fatal(err)
				}
			})
		}
		small, large := allocs(16), allocs(64)
		t.Logf("%s: %v allocations at depth 16, %v at depth 64", op, small, large)
		if large >= 6*small {
			t.Errorf("%s: %v allocations at depth 64, %v at depth 16: more than linear", op, large, small)
		}
	}
}

// newWS opens a workspace on dir that may write anywhere the deny rules
// allow, closed when the test ends: the limits are checked whatever a
// workflow declares.
func newWS(t *testing.T, dir string) *Workspace {
	t.Helper()
	base, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	ws, err := base.Restrict(Rules{Write: []string{"**"}})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// A path over the limits, such as a hostile model's "d/" × 3,000, is
// refused by every operation before any of it is walked or made, in one
// line naming the limits.
func TestPathOverLimitsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	ws := newWS(t, dir)
	for _, rel := range []string{
		strings.Repeat("d/", 3000) + "x.md",
		strings.Repeat("d/", writepolicy.MaxPathDepth) + "x.md",
		strings.Repeat("n", writepolicy.MaxPathBytes+1),
	} {
		ops := map[string]func() error{
			"write":   func() error { return ws.WriteFile(rel, []byte("x")) },
			"read":    func() error { _, err := ws.ReadFile(rel, 0); return err },
			"resolve": func() error { _, err := ws.Resolve(rel); return err },
			"list":    func() error { _, err := ws.List(rel + "/*"); return err },
			"search": func() error {
				_, err := ws.Search("x", SearchOptions{Glob: rel + "/*"})
				return err
			},
		}
		for op, f := range ops {
			var err error
			allocs := testing.AllocsPerRun(3, func() { err = f() })
			if !errors.Is(err, writepolicy.ErrPathTooLong) {
				t.Fatalf("%s of a %d-byte path: %v, want ErrPathTooLong", op, len(rel), err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 200 || !strings.Contains(msg, "at most 64 segments and 4096 bytes") {
				t.Errorf("%s: the refusal is %q, want one short line naming the limits", op, msg)
			}
			if allocs > 40 {
				t.Errorf("%s: %v allocations to refuse the path, want it refused at once", op, allocs)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused writes left %d entries", len(entries))
	}
	// At the depth limit a path is taken.
	if err := ws.WriteFile(deepRel(writepolicy.MaxPathDepth), []byte("x")); err != nil {
		t.Errorf("a path of %d segments: %v", writepolicy.MaxPathDepth, err)
	}
}

// A symlink whose target makes the location deeper than the limit is
// refused, though the path as given is short.
func TestSymlinkPastDepthLimitRefused(t *testing.T) {
	dir := t.TempDir()
	far := strings.Repeat("x/", 60)
	if err := os.MkdirAll(filepath.Join(dir, far), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(far, filepath.Join(dir, "s")); err != nil {
		t.Fatal(err)
	}
	ws := newWS(t, dir)
	rel := "s/" + strings.Repeat("y/", 10) + "f"
	if _, err := ws.ReadFile(rel, 0); !errors.Is(err, writepolicy.ErrPathTooLong) {
		t.Errorf("read %s: %v, want ErrPathTooLong", rel, err)
	}
	// baton never writes through a symlink; a read within the limits
	// goes through it.
	if err := os.WriteFile(filepath.Join(dir, far, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ReadFile("s/f", 0); err != nil {
		t.Errorf("read s/f (61 segments once resolved): %v", err)
	}
}
