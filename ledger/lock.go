package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gofrs/flock"
)

// lock takes an exclusive lock on <path>.lock so that appends from other
// goroutines or processes take turns: without it, two appends could both read
// the old ledger and the second rename would drop the first entry. The lock
// file stays in place (removing it would let two writers lock two different
// files); the lock itself (flock, or LockFileEx on Windows) dies with the
// process.
func lock(path string) (unlock func(), err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	fl := flock.New(lp)
	for {
		err = fl.Lock()
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	return func() { fl.Unlock() }, nil
}
