//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// killGroup starts the agent in its own process group and makes a
// cancellation or timeout kill the whole group: a shell's children (the
// agent itself, its tools) must not outlive the step.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
