//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTicks is the CPU time, in clock ticks, that process pid has used, from
// /proc; ok is false where there is no /proc.
func cpuTicks(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s, true
}

// Ctrl-C during the structure pass of a large document ends the process
// with the interrupt code and one line saying so, instead of parsing on.
// The 30 s bound only catches a process that ignores the signal.
func TestInterruptDuringStructurePass(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	isolateEnv(t)
	bin := buildBaton(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "headings.md")
	var b bytes.Buffer
	for i := range 3_000_000 {
		fmt.Fprintf(&b, "# H%d\n", i)
	}
	if err := os.WriteFile(doc, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"ask --dry-run":   {"ask", "--doc", doc, "--dry-run", "What does H42 say?"},
		"slice --outline": {"slice", "--doc", doc, "--outline"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Busy: a few tenths of a second of CPU, well inside the
			// parse of 30 MB of headings.
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				n, ok := cpuTicks(cmd.Process.Pid)
				if !ok {
					time.Sleep(500 * time.Millisecond)
					break
				}
				if n >= 30 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("baton did not end within 30 s of SIGINT\n%s", stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Fatalf("exit code %d, want %d\n%s", code, exitInterrupted, stderr.String())
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "baton: ") || !strings.Contains(last, "cancel") {
				t.Errorf("last line of stderr %q, want one line saying it was cancelled\n%s", last, stderr.String())
			}
		})
	}
}
