//go:build !unix

package bench

import "time"

// processCPU is unknown off unix; CPU figures then read 0.
func processCPU() time.Duration { return 0 }
