package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/atomicfile"
)

// A state file lives in the workspace, where a model can read files, so it
// is read and written only through an os.Root opened at its own folder: a
// symlink planted in its place must neither hand outside content to the
// model nor have baton write outside. A symlink to a file in the same folder
// is followed (its target is rewritten and the link kept), as users who
// link state.yaml to a sibling expect.

// maxLinkHops matches the limit Linux puts on symlink resolution.
const maxLinkHops = 40

// openFolder opens the folder holding path and returns the name, relative to
// it, of the file path really is once symlinks inside the folder are
// followed. The caller closes the root.
func openFolder(path string) (*os.Root, string, error) {
	dir := filepath.Dir(path)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("state %s: %w", path, unwrapPath(err))
	}
	name, err := followInFolder(root, dir, filepath.Base(path), path)
	if err != nil {
		root.Close()
		return nil, "", err
	}
	return root, name, nil
}

// followInFolder resolves name's symlinks within root, whose path is dir,
// refusing any that leads out of it.
func followInFolder(root *os.Root, dir, name, path string) (string, error) {
	out := fmt.Errorf("state %s is a symlink leading out of its folder; baton reads and writes a state file only inside its own folder", path)
	for hops := 0; ; hops++ {
		fi, err := root.Lstat(name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil // missing, or the file itself: the caller reports what is wrong with it
		}
		if hops == maxLinkHops {
			return "", fmt.Errorf("state %s: too many levels of symlinks", path)
		}
		target, err := root.Readlink(name)
		if err != nil {
			return "", fmt.Errorf("state %s: %w", path, unwrapPath(err))
		}
		if filepath.IsAbs(target) {
			rel, ok := relTo(dir, target)
			if !ok {
				return "", out
			}
			target = rel
		} else {
			target = filepath.Join(filepath.Dir(name), target)
		}
		target = filepath.Clean(target)
		if target == "." || target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) || filepath.IsAbs(target) {
			return "", out
		}
		name = filepath.ToSlash(target)
	}
}

// relTo returns abs relative to dir, comparing real locations when dir's
// own path holds symlinks.
func relTo(dir, abs string) (string, bool) {
	for _, base := range candidates(dir) {
		if r, err := filepath.Rel(base, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r, true
		}
	}
	return "", false
}

func candidates(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return []string{abs, real}
	}
	return []string{abs}
}

// readIn returns the bytes and mode of name, which must be a regular file.
// The file opened is checked to be the one inspected, so a symlink swapped
// in between is caught rather than followed.
func readIn(root *os.Root, name, path string) ([]byte, fs.FileMode, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, 0, fmt.Errorf("state %s: %w", path, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("state %s: not a regular file", path)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, fmt.Errorf("state %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return nil, 0, fmt.Errorf("state %s: the file was replaced while being opened; try again", path)
	}
	// One byte past the limit, so parseDocument sees a file that grew.
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, 0, fmt.Errorf("state %s: %w", path, unwrapPath(err))
	}
	return data, fi.Mode().Perm(), nil
}

// writeIn replaces path's file (its target, if it is a symlink within its
// folder) with data, creating the folder if need be.
func writeIn(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("state %s: %w", path, unwrapPath(err))
	}
	root, name, err := openFolder(path)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := atomicfile.WriteIn(root, name, data, mode); err != nil {
		if errors.Is(err, atomicfile.ErrSymlink) {
			// Swapped in since openFolder looked: refuse rather than chase it.
			return fmt.Errorf("state %s: became a symlink while being written; try again", path)
		}
		return fmt.Errorf("state %s: %w", path, unwrapPath(errors.Unwrap(err)))
	}
	return nil
}

// unwrapPath drops the *fs.PathError wrapper, whose message names the path
// relative to the folder; errors name the file as the caller gave it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
