package state

import (
	"fmt"

	"github.com/baton-dev/baton/internal/filelock"
)

// Lock takes an exclusive lock for path, blocking until it is free,
// so that writers in other goroutines and other processes take turns (see
// package filelock, which keeps the lock file out of the workspace).
func Lock(path string) (unlock func() error, err error) {
	unlock, err = filelock.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return unlock, nil
}
