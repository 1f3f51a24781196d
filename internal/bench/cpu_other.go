//go:build !unix

package bench

import (
	"os"
	"time"
)

// processCPU is unknown off unix; CPU figures then read 0.
func processCPU() time.Duration { return 0 }

// peakRSS is unknown off unix.
func peakRSS(*os.ProcessState) (int64, bool) { return 0, false }
