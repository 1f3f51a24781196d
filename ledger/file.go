package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-dev/baton/internal/atomicfile"
)

// Every read and write goes through an os.Root opened at the ledger's own
// folder, and the ledger itself must be a regular file. A ledger lives in
// the workspace, where a model can read files: a symlink planted there must
// neither hand outside content to the model nor have baton write through it.

// openFolder opens the folder holding path. The caller closes the root.
func openFolder(path string) (*os.Root, string, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, "", fmt.Errorf("ledger %s: %w", path, unwrapPath(err))
	}
	return root, filepath.Base(path), nil
}

// errSymlink is the refusal for a ledger that is a symlink.
func errSymlink(path string) error {
	return fmt.Errorf("ledger %s %w; baton keeps its ledger as a regular file", path, atomicfile.ErrSymlink)
}

// readIn returns the ledger's bytes and mode, refusing anything but a
// regular file. The file opened is checked to be the one inspected, so a
// symlink swapped in between is caught rather than followed.
func readIn(root *os.Root, name, path string) ([]byte, fs.FileMode, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger %s: %w", path, unwrapPath(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, 0, errSymlink(path)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("ledger %s: not a regular file", path)
	}
	if fi.Size() > MaxSize {
		return nil, 0, tooLarge(path)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return nil, 0, fmt.Errorf("ledger %s: the file was replaced while being opened; try again", path)
	}
	// One byte past the bound tells a ledger that grew past it (or
	// while being read) from one that is exactly at it.
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, 0, fmt.Errorf("ledger %s: %w", path, unwrapPath(err))
	}
	if len(data) > MaxSize {
		return nil, 0, tooLarge(path)
	}
	return data, fi.Mode().Perm(), nil
}

// MaxSize bounds the ledgers this package reads and writes. An entry is a
// few kilobytes, so this holds thousands of them; a model can write the
// ledger, and a file past the bound is refused rather than read into memory
// whole on every step.
const MaxSize = 16 << 20

// ErrTooLarge is wrapped when a ledger is over MaxSize.
var ErrTooLarge = errors.New("ledger too large")

func tooLarge(path string) error {
	return fmt.Errorf("ledger %s is over %d MiB: %w; move it aside and start a new one", path, MaxSize>>20, ErrTooLarge)
}

// unwrapPath drops the *fs.PathError wrapper, whose message names the path
// relative to the root; errors name the ledger as the caller gave it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Read parses the ledger file at path. A missing ledger is an error wrapping
// fs.ErrNotExist; a symlinked one is refused.
func Read(path string) ([]Entry, []Problem, error) {
	root, name, err := openFolder(path)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	data, _, err := readIn(root, name, path)
	if err != nil {
		return nil, nil, err
	}
	return Parse(data, path)
}

// Append adds e at the end of the ledger at path, creating the file if need
// be. An incomplete entry is refused and nothing is written. Appends take
// turns through a lock file beside the ledger (<path>.lock). The write is
// atomic, and afterwards the file is read back to check that the old content
// is an exact prefix of the new: a ledger is never truncated or rewritten.
// A ledger that is a symlink is refused, never followed or replaced.
func Append(path string, e Entry) error {
	if err := e.Validate(); err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	if err := e.CheckText(); err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	entry := Render(e)
	// An entry whose text would not read back as itself (a heading inside
	// a field, say) would corrupt the ledger for every later reader.
	back, problems, err := Parse(entry, path)
	if err != nil || len(problems) > 0 || len(back) != 1 || back[0].Validate() != nil {
		return fmt.Errorf("ledger %s: entry %q does not read back as one complete entry; check its text for markdown headings", path, e.Heading())
	}
	unlock, err := lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	root, name, err := openFolder(path)
	if err != nil {
		return err
	}
	defer root.Close()
	old, perm, err := readIn(root, name, path)
	if errors.Is(err, fs.ErrNotExist) {
		old, perm, err = nil, 0o644, nil
	}
	if err != nil {
		return err
	}
	next := make([]byte, 0, len(old)+len(entry)+2)
	next = append(next, old...)
	switch {
	case len(old) == 0:
	case bytes.HasSuffix(old, []byte("\n\n")):
	case bytes.HasSuffix(old, []byte("\n")):
		next = append(next, '\n')
	default:
		next = append(next, '\n', '\n')
	}
	next = append(next, entry...)
	if len(next) > MaxSize {
		return tooLarge(path) // it could not be read back
	}
	if err := atomicfile.WriteIn(root, name, next, perm); err != nil {
		if errors.Is(err, atomicfile.ErrSymlink) {
			return errSymlink(path)
		}
		return fmt.Errorf("ledger %s: %w", path, unwrapPath(errors.Unwrap(err)))
	}
	got, _, err := readIn(root, name, path)
	if err != nil {
		return err // it names the ledger
	}
	if !bytes.HasPrefix(got, old) {
		return fmt.Errorf("ledger %s: %w", path, ErrRewritten)
	}
	return nil
}

// Latest returns the newest complete entry of the ledger at path: the latest
// heading time, and of equal times the one further down. Incomplete and
// unreadable entries are passed over, since a session must never be seeded
// from them.
func Latest(path string) (*Entry, error) {
	entries, _, err := Read(path)
	if err != nil {
		return nil, err
	}
	best := LatestOf(entries)
	if best == nil {
		return nil, fmt.Errorf("ledger %s: %w", path, ErrNoEntry)
	}
	return best, nil
}

// LatestOf is Latest over entries already read: the complete entry with
// the latest heading time, of equal times the one further down; nil when
// none is complete. A caller that also needs the other entries reads the
// file once and so sees one version of it.
func LatestOf(entries []Entry) *Entry {
	var best *Entry
	for i := range entries {
		e := &entries[i]
		if !e.Complete() {
			continue
		}
		if best == nil || !e.Time.Before(best.Time) {
			best = e
		}
	}
	return best
}
