package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
)

// FakeCommand is the hidden baton subcommand that serves the fan-out
// benchmark's fake provider from a process of its own, so that the
// benchmark's CPU figures are baton's and the SDK's alone, as they are
// against a user's real provider, which never runs inside baton.
const FakeCommand = "bench-fake"

// fanoutParts is the number of sections of the fan-out document.
const fanoutParts = 20

// ServeFanoutFake serves the fan-out fake for a plan of n subtasks, each
// reply held back by latency. It writes the fake's Anthropic base URL as
// the first line of out and serves until stdin reaches its end (the parent
// closed it or died), so a benchmark that is killed leaves no server behind.
func ServeFanoutFake(n int, latency time.Duration, stdin io.Reader, out io.Writer) error {
	if n < 1 || latency < 0 {
		return fmt.Errorf("bench fake: want at least one subtask and a latency of zero or more, got %d and %s", n, latency)
	}
	srv := newFake(fanoutPlan(n, fanoutParts))
	defer srv.Close()
	srv.SetLatency(latency)
	if _, err := fmt.Fprintln(out, srv.AnthropicBaseURL()); err != nil {
		return fmt.Errorf("bench fake: %w", err)
	}
	_, err := io.Copy(io.Discard, stdin)
	return err
}

// fanoutFake is the provider a fan-out run talks to: an llmtest server in
// this process, or one in a child baton process.
type fanoutFake struct {
	url   string
	local *llmtest.Server
	child *exec.Cmd
	stdin io.WriteCloser
}

// isBatonBinary says whether path is a baton binary that can serve the
// fake; a test binary would run its tests instead.
func isBatonBinary(path string) bool {
	base := strings.TrimSuffix(filepath.Base(path), ".exe")
	return path != "" && strings.HasPrefix(base, "baton") && !strings.HasSuffix(base, ".test")
}

// startFanoutFake starts the fake for n subtasks at latency l: in a child
// process of baton when baton is a baton binary, else in this process.
func startFanoutFake(ctx context.Context, baton string, n int, l time.Duration) (*fanoutFake, error) {
	if !isBatonBinary(baton) {
		srv := newFake(fanoutPlan(n, fanoutParts))
		srv.SetLatency(l)
		return &fanoutFake{url: srv.AnthropicBaseURL(), local: srv}, nil
	}
	cmd := exec.CommandContext(ctx, baton, FakeCommand, "--subtasks", itoa(n), "--latency", l.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench fake: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench fake: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench fake: start %s: %w", baton, err)
	}
	f := &fanoutFake{child: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http") {
		f.close()
		return nil, fmt.Errorf("bench fake: %s %s printed no address (%q): %v", baton, FakeCommand, line, err)
	}
	f.url = strings.TrimSpace(line)
	return f, nil
}

// close stops the fake and returns the CPU time the child process used
// (zero for a fake in this process).
func (f *fanoutFake) close() time.Duration {
	if f.local != nil {
		f.local.Close()
		return 0
	}
	f.stdin.Close()
	err := f.child.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0
	}
	ps := f.child.ProcessState
	return ps.UserTime() + ps.SystemTime()
}

// requests are the requests the fake received; nil when it ran in a child.
func (f *fanoutFake) requests() []llmtest.RecordedRequest {
	if f.local == nil {
		return nil
	}
	return f.local.Requests()
}
