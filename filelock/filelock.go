// Package filelock gives baton's writers of one file (state.yaml, the
// ledger) turns: an exclusive OS lock on a lock file beside it, blocking
// until it is free, across goroutines and processes and on every platform
// (flock on Unix, LockFileEx on Windows, through gofrs/flock).
//
// The lock file stays in place: removing it would let two writers lock two
// different files. The lock dies with its process, so a crash never leaves
// a file locked.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gofrs/flock"
)

// Lock takes the exclusive lock on path+".lock", creating it and its folder
// if need be, and returns the function that releases it.
func Lock(path string) (unlock func() error, err error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The lock file is opened by path with O_CREATE: a symlink planted in
	// its place would make baton create files wherever it points.
	if fi, err := os.Lstat(lp); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("lock %s: %s is a symlink; baton keeps its lock files as regular files", path, filepath.Base(lp))
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
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() error {
		if err := fl.Unlock(); err != nil {
			return fmt.Errorf("unlock %s: %w", path, err)
		}
		return nil
	}, nil
}
