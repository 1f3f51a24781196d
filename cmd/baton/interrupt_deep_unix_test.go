//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
)

// deepPath is the hostile model's path: "d/" n times, then a file name.
func deepPath(n int) string { return strings.Repeat("d/", n) + "x.md" }

// hostileAsked plays the example workflow as workScript does, except that
// the implement step, after its first write, asks for a write to a
// 3,000-folder path every turn. Once the first such write is asked for it
// holds every later request until the test lets go: the signal, sent once
// baton says it runs the write, finds it in that write or in the next
// model call. It records every turn it answered.
type hostileAsked struct {
	mu       sync.Mutex
	answered map[string]int
	again    []string // keys of turns asked again
	holding  bool
	release  chan struct{}
}

func newHostile() *hostileAsked {
	return &hostileAsked{answered: map[string]int{}, release: make(chan struct{})}
}

func (h *hostileAsked) rule() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		h.mu.Lock()
		holding, release := h.holding, h.release
		h.mu.Unlock()
		if holding {
			<-release
			return llmtest.Fail(500, "api_error", "held")
		}
		session := ""
		if strings.Contains(r.System, "You are a sub-agent") {
			session = r.Messages[0].Content
		}
		k := fmt.Sprintf("%s\x00%s\x00%d", r.System, session, len(r.Messages))
		h.mu.Lock()
		if h.answered[k] > 0 {
			h.again = append(h.again, k)
		}
		h.answered[k]++
		h.mu.Unlock()
		if strings.Contains(r.System, "# Implement") && rounds(r) >= 2 {
			if rounds(r) >= 40 {
				return llmtest.CallTools(toolCall("finish", map[string]string{"summary": "implemented"}))
			}
			h.mu.Lock()
			if !h.holding && h.release != nil {
				h.holding = true
			}
			h.mu.Unlock()
			return llmtest.CallTools(toolCall("write_file", map[string]string{"path": deepPath(3000), "content": "x\n"}))
		}
		return workScript(r)
	})
}

// await reports whether s appears in out before the bound.
func await(out *lockedBuffer, s string, bound time.Duration) bool {
	end := time.Now().Add(bound)
	for time.Now().Before(end) {
		if strings.Contains(out.String(), s) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// One SIGINT, or one SIGTERM, while a hostile model has baton write to a
// 3,000-folder path ends baton with the interrupt code and its one line;
// the resume then finishes the run without asking a turn already
// answered. Before, the write took minutes and the signal waited for it:
// the 60 s bound only catches a process that ignores the first signal.
func TestOneSignalEndsHostileDeepPathRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	isolateEnv(t)
	bin := buildBaton(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := exampleWorkspace(t)
			h := newHostile()
			s := llmtest.NewServer(t, h.rule())
			released := false
			let := func() {
				if !released {
					released = true
					close(h.release)
				}
			}
			defer let()
			wf := filepath.Join(dir, "baton.yaml")
			args := []string{"--workflow", wf, "--provider", "openai", "--base-url", s.OpenAIBaseURL(), "--concurrency", "1", "--max-turns", "64"}
			cmd := exec.Command(bin, append([]string{"run"}, args...)...)
			cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
			var errOut lockedBuffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// baton says it starts the write before it runs it.
			if !await(&errOut, "write_file d/d/d/", 120*time.Second) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the run never reached the deep write\n%s", errOut.String())
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("baton did not end after one %v\n%s", sig, errOut.String())
			}
			let()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() || ws.ExitStatus() != exitInterrupted {
				t.Fatalf("after %v baton ended with %v, want exit %d\n%s", sig, cmd.ProcessState, exitInterrupted, errOut.String())
			}
			checkInterruptLine(t, errOut.String(), "3 (implement-change)")

			h.mu.Lock()
			h.holding, h.release = false, nil
			h.mu.Unlock()
			code, _, resumeErr := runBaton(t, "", append([]string{"resume"}, args...)...)
			if code != exitOK {
				t.Fatalf("resume: exit %d\n%s", code, resumeErr)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, k := range h.again {
				t.Errorf("a turn already answered was asked again: %.60q", k)
			}
		})
	}
}

// One SIGINT while an external agent (--agent-cmd) runs a step that would
// take five minutes ends baton with the interrupt code; the resume runs
// that step again and no step before it.
func TestOneSignalEndsAgentCmdStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	isolateEnv(t)
	bin := buildBaton(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	started := filepath.Join(logDir, "started")
	agent := writeAgent(t, logDir, "agent.sh", `echo "$BATON_SKILL" >> '`+logDir+`/calls'
if [ "$BATON_SKILL" = plan-change ] && [ ! -f '`+started+`' ]; then touch '`+started+`'; sleep 300; fi
printf '`+"```"+`handoff\nsummary: ok\n`+"```"+`\n'
`)
	wf := filepath.Join(ws, "baton.yaml")
	cmd := exec.Command(bin, "run", "--workflow", wf, "--agent-cmd", agent)
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for !exists(started) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the agent never started plan-change\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("baton did not end after one interrupt\n%s", errOut.String())
	}
	if st := cmd.ProcessState.Sys().(syscall.WaitStatus); st.Signaled() || st.ExitStatus() != exitInterrupted {
		t.Fatalf("baton ended with %v, want exit %d\n%s", cmd.ProcessState, exitInterrupted, errOut.String())
	}
	checkInterruptLine(t, errOut.String(), "2 (plan-change)")
	if code, _, resumeErr := runBaton(t, "", "resume", "--workflow", wf, "--agent-cmd", agent); code != exitOK {
		t.Fatalf("resume: exit %d\n%s", code, resumeErr)
	}
	calls, _ := os.ReadFile(filepath.Join(logDir, "calls"))
	if got := strings.Join(strings.Fields(string(calls)), " "); got != "analyse-request plan-change plan-change implement-change write-report" {
		t.Errorf("the agent ran %s", got)
	}
}
