//go:build !unix

package runner

import "os/exec"

// killGroup leaves the default cancellation (kill the process) where
// process groups are not available.
func killGroup(cmd *exec.Cmd) {}
