// Package batondir owns the .baton folder baton keeps beside a user's work:
// run logs, journals, records, the run lock. None of it is the user's to
// commit, so the folder ignores itself for git, the way test and build
// caches do, and `git status` after a run shows nothing baton wrote there.
package batondir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Name is the folder's name.
const Name = ".baton"

// gitignore is the folder's own ignore file: it ignores everything in the
// folder, itself included.
const gitignore = "# baton's run state (logs, journals, records, the run lock); written by baton\n*\n"

// Ensure creates dir (a .baton folder) if need be and writes its
// .gitignore if it has none. A .gitignore the user wrote is left alone.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// O_EXCL: never through a symlink planted meanwhile, never over a file
	// another process just wrote.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("%s: %w", p, err)
	}
	_, werr := f.WriteString(gitignore)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", p, werr)
	}
	return nil
}

// EnsureFor ensures the .baton folder that holds path, if path lies in
// one: a --runs-dir elsewhere gets nothing written beside it.
func EnsureFor(path string) error {
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		if filepath.Base(d) == Name {
			return Ensure(d)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
