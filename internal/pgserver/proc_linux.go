package pgserver

import "syscall"

// deathSignal asks Linux to stop postgres (fast shutdown) if the test binary
// dies without its cleanup, so a killed test run leaves no server behind.
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGINT }
