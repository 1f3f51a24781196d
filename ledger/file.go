package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/baton-dev/baton/atomicfile"
)

// Read parses the ledger file at path.
func Read(path string) ([]Entry, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: %w", err)
	}
	return Parse(data, path)
}

// Append adds e at the end of the ledger at path, creating the file if need
// be. An incomplete entry is refused and nothing is written. Appends take
// turns through a lock file beside the ledger (<path>.lock). The write is
// atomic, and afterwards the file is read back to check that the old content
// is an exact prefix of the new: a ledger is never truncated or rewritten.
func Append(path string, e Entry) error {
	if err := e.Validate(); err != nil {
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
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
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
	if err := atomicfile.Write(path, next, perm); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ledger %s: reading back: %w", path, err)
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
	if best == nil {
		return nil, fmt.Errorf("ledger %s: %w", path, ErrNoEntry)
	}
	return best, nil
}
