//go:build !unix

package state

import (
	"errors"
	"fmt"
)

// ErrLockUnsupported: this platform has no lock implementation yet.
var ErrLockUnsupported = errors.New("file locking is not supported on this platform")

// Lock is only implemented on Unix-like systems.
func Lock(path string) (unlock func() error, err error) {
	return nil, fmt.Errorf("state %s: lock: %w", path, ErrLockUnsupported)
}
