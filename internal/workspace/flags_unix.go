//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// openReadFlags opens without blocking, so a file swapped for a FIFO after
// it was inspected cannot hang the call; regular files ignore the flag.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK
