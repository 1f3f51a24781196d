//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
)

// buildBaton builds the baton binary into a temporary folder: signals need
// a real process, with main's own signal handling.
func buildBaton(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "baton")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// interruptAndResume runs baton as a process, sends sig when the request
// hold picks arrives, checks how the process ended, resumes in process and
// checks the resume against an uninterrupted run.
func interruptAndResume(t *testing.T, sig syscall.Signal, hold func(r llmtest.RecordedRequest) bool, skill, step string, between func(dir string)) (workspace, stderr string) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	isolateEnv(t)
	want := uninterrupted(t)
	bin := buildBaton(t)
	dir := exampleWorkspace(t)
	a := newAsked()
	a.hold = hold
	s := llmtest.NewServer(t, a.rule())
	defer func() {
		select {
		case <-a.release:
		default:
			close(a.release)
		}
	}()
	wf := filepath.Join(dir, "baton.yaml")
	cmd := exec.Command(bin, "run", "--workflow", wf, "--provider", "openai", "--base-url", s.OpenAIBaseURL(), "--concurrency", "1")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.arrived:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the run never reached the request to interrupt\n%s", errOut.String())
	}
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("baton did not end after %v\n%s", sig, errOut.String())
	}
	close(a.release)
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if sig == syscall.SIGKILL {
		if !ws.Signaled() {
			t.Fatalf("baton was not killed: %v", cmd.ProcessState)
		}
	} else if ws.Signaled() || ws.ExitStatus() != exitInterrupted {
		t.Fatalf("after %v baton ended with %v, want exit %d\n%s", sig, cmd.ProcessState, exitInterrupted, errOut.String())
	}
	if between != nil {
		between(dir)
	}

	a.mu.Lock()
	a.hold = nil
	a.mu.Unlock()
	code, out, resumeErr := runBaton(t, "", "resume", "--workflow", wf, "--provider", "openai", "--base-url", s.OpenAIBaseURL(), "--concurrency", "1")
	if code != exitOK || strings.TrimSpace(out) != "REPORT: the --shout flag is in." {
		t.Fatalf("resume: exit %d, stdout %q\n%s", code, out, resumeErr)
	}
	a.check(t)
	if got := stepStarts(t, dir)[skill]; len(got) != 2 || got[0] != step || got[1] != step {
		t.Errorf("step %s started as %v, want it resumed under its number %s", skill, got, step)
	}
	got := outcome(t, dir)
	for f, w := range want {
		if f == "app/greet.py" && strings.Contains(got[f], "edited") {
			continue // the test's own edit, checked by the test
		}
		if got[f] != w {
			t.Errorf("%s differs from an uninterrupted run's:\n--- resumed\n%s\n--- uninterrupted\n%s", f, got[f], w)
		}
	}
	return dir, errOut.String()
}

// checkInterruptLine checks that baton said, in one line, how to resume,
// and nothing else after the signal.
func checkInterruptLine(t *testing.T, stderr, step string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "baton: interrupted: run ") || !strings.Contains(last, "stopped in step "+step) || !strings.Contains(last, "; resume with: baton resume --workflow ") {
		t.Errorf("the last line is %q, want one line saying how to resume", last)
	}
	for _, l := range lines[:len(lines)-1] {
		if strings.Contains(l, "interrupted") || strings.Contains(l, "resume with") || strings.Contains(l, "calls answered from journals") {
			t.Errorf("more than one line about the interruption: %q", l)
		}
	}
}

// Ctrl-C while a step waits for its third turn, after it wrote a file:
// exit 130, one line; the resume continues the step without writing the
// file again (the test edits it between the runs) or asking a turn again.
func TestSIGINTMidStepResumesExactly(t *testing.T) {
	const edited = "print('edited between the runs')\n"
	dir, stderr := interruptAndResume(t, syscall.SIGINT, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "# Implement") && rounds(r) == 2
	}, "implement-change", "3", func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "app", "greet.py"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	checkInterruptLine(t, stderr, "3 (implement-change)")
	if got, _ := os.ReadFile(filepath.Join(dir, "app", "greet.py")); string(got) != edited {
		t.Errorf("app/greet.py = %q: the step's write_file ran again over the edit", got)
	}
}

// SIGTERM while a dispatch_agents call has one sub-agent answered and the
// other in flight: the resume asks only the second.
func TestSIGTERMMidDispatchResumesExactly(t *testing.T) {
	_, stderr := interruptAndResume(t, syscall.SIGTERM, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "You are a sub-agent") && strings.Contains(r.Messages[0].Content, "find the tests")
	}, "analyse-request", "1", nil)
	checkInterruptLine(t, stderr, "1 (analyse-request)")
}

// SIGKILL in the same place: nothing is said, the journal holds the rest.
// The step's input file, edited between the runs, would fork the resumed
// session if its first context were rebuilt or its read_file ran again.
func TestSIGKILLMidDispatchResumesExactly(t *testing.T) {
	interruptAndResume(t, syscall.SIGKILL, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "You are a sub-agent") && strings.Contains(r.Messages[0].Content, "find the tests")
	}, "analyse-request", "1", func(dir string) {
		p := filepath.Join(dir, "docs", "requirements.md")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(data, "\nEdited between the runs.\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
	})
}
