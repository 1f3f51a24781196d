package ledger

import (
	"fmt"

	"github.com/baton-dev/baton/internal/filelock"
)

// lock takes an exclusive lock for path (package filelock, which keeps the
// lock file out of the workspace) so that appends from other
// goroutines or processes take turns: without it, two appends could both read
// the old ledger and the second rename would drop the first entry.
func lock(path string) (unlock func() error, err error) {
	unlock, err = filelock.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	return unlock, nil
}
