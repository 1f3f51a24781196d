//go:build unix && !linux

package pgserver

import "syscall"

// deathSignal has no equivalent outside Linux: a killed test run may leave
// its server running until the machine restarts.
func deathSignal(*syscall.SysProcAttr) {}
