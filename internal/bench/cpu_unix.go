//go:build unix

package bench

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the most resident memory a finished child process used, in
// bytes, and whether the system says. Linux gives Maxrss in KiB, macOS and
// the BSDs in bytes.
func peakRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	if runtime.GOOS == "darwin" || strings.HasSuffix(runtime.GOOS, "bsd") {
		return int64(ru.Maxrss), true
	}
	return int64(ru.Maxrss) * 1024, true
}
