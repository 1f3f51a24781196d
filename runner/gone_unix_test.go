//go:build unix

package runner_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// gone reports whether pid has exited (a zombie nobody reaped counts).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z")
}
