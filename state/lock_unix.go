//go:build unix

package state

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock on <path>.lock, blocking until it is free,
// so that writers in other goroutines and other processes take turns. The
// lock file is left in place: removing it would let two writers lock two
// different files. The lock dies with the process, so a crash never leaves
// the state locked.
func Lock(path string) (unlock func() error, err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("state %s: lock: %w", path, err)
	}
	fh, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state %s: lock: %w", path, err)
	}
	for {
		err = unix.Flock(int(fh.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("state %s: lock: %w", path, err)
	}
	return func() error {
		uerr := unix.Flock(int(fh.Fd()), unix.LOCK_UN)
		cerr := fh.Close()
		if uerr != nil {
			return fmt.Errorf("state %s: unlock: %w", path, uerr)
		}
		if cerr != nil {
			return fmt.Errorf("state %s: unlock: %w", path, cerr)
		}
		return nil
	}, nil
}
