// Package testws gives tests a workspace of their own: a copy of one of the
// shipped examples (examples/workflow, examples/suite) in a temporary
// folder, so a run's writes never touch the repository.
package testws

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/internal/batondir"
)

// Copy copies the folder src into a fresh temporary folder and returns it.
// Any .baton folder (a run made in the example by hand) is left out.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == batondir.Name {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}
