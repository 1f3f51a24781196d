package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
)

// ErrSymlink is wrapped when WriteIn is asked to replace a symlink. Renaming
// a regular file over a link would silently turn whatever the link pointed
// at into a copy inside the root; callers that mean to write a link's target
// resolve it themselves and name the target.
var ErrSymlink = errors.New("is a symlink")

// WriteIn is Write confined to root: name (slash-separated, relative to
// root) is replaced with data by a temporary file created beside it through
// root, fsynced, renamed over name through root, and the directory fsynced.
// Missing parent directories are created inside root. Every step resolves
// its path through root, so no symlink, however it was planted or swapped
// in, can make the write land outside root. If name is a symlink, nothing is
// written and the error wraps ErrSymlink.
func WriteIn(root *os.Root, name string, data []byte, perm os.FileMode) (err error) {
	dir, base := path.Split(name)
	dir = path.Clean(dir)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("write %s: not a file name", name)
	}
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("write %s: %w", name, ErrSymlink)
	}
	f, tmp, err := createTemp(root, dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = root.Rename(tmp, name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// Best effort, as in Write.
	if d, derr := root.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// createTemp makes a new, empty file beside base in dir. os.CreateTemp has
// no Root form; O_EXCL gives the same guarantee that the name was free.
func createTemp(root *os.Root, dir, base string) (*os.File, string, error) {
	for range 100 {
		tmp := path.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", base)
}
