package writepolicy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// deep is a path of n segments of 60 bytes each, under the byte limit for
// every n up to MaxPathDepth.
func deep(n int) string {
	seg := strings.Repeat("d", 59)
	return strings.Repeat(seg+"/", n-1) + seg
}

// The work a check does grows with the path's length, not its square: a
// path four times as deep costs under six times the allocations (keying
// every prefix again, as the policy once did, costs over ten times), on
// folders that exist and on ones that do not.
func TestCheckIsLinearInDepth(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "made", deep(writepolicy.MaxPathDepth-1)), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		check func(root, rel string) error
	}{{"write", writepolicy.CheckWrite}, {"read", writepolicy.CheckRead}} {
		for _, under := range []string{"made", "missing"} {
			allocs := func(n int) float64 {
				rel := under + "/" + deep(n-1)
				return testing.AllocsPerRun(5, func() {
					if err := c.check(root, rel); err != nil {
						t.Fatal(err)
					}
				})
			}
			small, large := allocs(16), allocs(64)
			if large >= 6*small {
				t.Errorf("%s under %s: %v allocations at depth 64, %v at depth 16: more than linear", c.name, under, large, small)
			}
		}
	}
}

// A path over the limits is refused before any of it is walked, in one
// short line that names the limits.
func TestPathOverLimitsRefused(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{
		strings.Repeat("d/", 3000) + "x",
		strings.Repeat("d/", writepolicy.MaxPathDepth) + "x",
		strings.Repeat("n", writepolicy.MaxPathBytes+1),
		`a\` + strings.Repeat(`d\`, writepolicy.MaxPathDepth),
	} {
		for op, check := range map[string]func(string, string) error{"write": writepolicy.CheckWrite, "read": writepolicy.CheckRead} {
			var err error
			allocs := testing.AllocsPerRun(3, func() { err = check(root, rel) })
			if !errors.Is(err, writepolicy.ErrPathTooLong) {
				t.Fatalf("%s of a %d-byte path: %v, want ErrPathTooLong", op, len(rel), err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || len(msg) > 200 || !strings.Contains(msg, "at most 64 segments and 4096 bytes") {
				t.Errorf("%s: the refusal is %q, want one short line naming the limits", op, msg)
			}
			if allocs > 40 {
				t.Errorf("%s: %v allocations to refuse the path, want it refused at once", op, allocs)
			}
		}
	}
	// At the limits, a path is taken.
	for _, rel := range []string{deep(writepolicy.MaxPathDepth), strings.Repeat("n", 255) + "/" + strings.Repeat("./", 1900) + "x"} {
		if err := writepolicy.CheckWrite(root, rel); err != nil {
			t.Errorf("a %d-byte path: %v", len(rel), err)
		}
	}
}
