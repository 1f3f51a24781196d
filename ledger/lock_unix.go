//go:build unix

package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lock takes an exclusive lock on <path>.lock so that appends from other
// goroutines or processes take turns: without it, two appends could both read
// the old ledger and the second rename would drop the first entry. The lock
// file stays in place (removing it would let two writers lock two different
// files); the lock itself dies with the process.
func lock(path string) (unlock func(), err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
