package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gofrs/flock"
)

// Lock takes an exclusive lock on <path>.lock, blocking until it is free,
// so that writers in other goroutines and other processes take turns. The
// lock file is left in place: removing it would let two writers lock two
// different files. The lock is an OS lock (flock, or LockFileEx on
// Windows) and dies with the process, so a crash never leaves the state
// locked.
func Lock(path string) (unlock func() error, err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("state %s: lock: %w", path, err)
	}
	// A Flock of its own per call: one Flock locked twice returns at once,
	// which would let two goroutines in.
	fl := flock.New(lp)
	for {
		err = fl.Lock()
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("state %s: lock: %w", path, err)
	}
	return func() error {
		if err := fl.Unlock(); err != nil {
			return fmt.Errorf("state %s: unlock: %w", path, err)
		}
		return nil
	}, nil
}
