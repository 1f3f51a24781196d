//go:build unix

package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/llm/llmtest"
)

// ptyReader gathers what a pty's master side reads, and tells when it first
// holds a given text.
type ptyReader struct {
	mu   sync.Mutex
	got  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (p *ptyReader) run(r interface{ Read([]byte) (int, error) }) {
	buf := make([]byte, 64)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.got.Write(buf[:n])
			if strings.Contains(p.got.String(), p.want) {
				p.once.Do(func() { close(p.seen) })
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (p *ptyReader) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The terminal turns every newline into CR LF.
	return strings.ReplaceAll(p.got.String(), "\r\n", "\n")
}

// On a terminal, --stream shows the answer as it is written: the fake
// holds the last piece of the synthesis until the first has been read
// from the pty, so the test passes only if the first piece reached the
// terminal while the answer was still being written.
func TestAskStreamOnPTY(t *testing.T) {
	isolateEnv(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		testdep.Missing(t, "a pty", err.Error())
	}
	defer ptmx.Close()
	defer tty.Close()
	rd := &ptyReader{want: streamPieces[0], seen: make(chan struct{})}
	go rd.run(ptmx)

	var held atomic.Bool
	var atHold atomic.Value
	last := len(streamPieces) - 1
	s := llmtest.NewServer(t, streamScript(func(int) llmtest.Reply {
		return llmtest.Reply{Pieces: streamPieces, BeforePiece: func(i int) {
			if i != last {
				return
			}
			select {
			case <-rd.seen:
				held.Store(true)
			case <-time.After(30 * time.Second):
			}
			atHold.Store(rd.text())
		}}
	}))
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"ask", "--planner", "full", "--doc", exampleDoc, "--stream", "--no-save", "What happened?"},
		strings.NewReader(""), tty, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if !held.Load() {
		t.Fatalf("the first piece of the answer had not reached the terminal when the last was about to be sent; the terminal had %q", atHold.Load())
	}
	if before, _ := atHold.Load().(string); strings.Contains(before, streamPieces[last]) {
		t.Fatalf("the last piece was on the terminal before it was sent: %q", before)
	}
	// Everything written is read back within a generous guard.
	want := streamAnswer + "\n"
	deadline := time.Now().Add(30 * time.Second)
	for rd.text() != want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := rd.text(); got != want {
		t.Errorf("the terminal shows %q, want the answer once: %q", got, want)
	}
}

// With stderr on the same terminal, the live progress block stops before
// the answer starts: it redraws by moving the cursor up, which would write
// over the answer. After the answer's first piece the terminal gets no
// cursor movement, and the answer is on it once.
func TestAskStreamOnPTYWithProgress(t *testing.T) {
	isolateEnv(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		testdep.Missing(t, "a pty", err.Error())
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	rd := &ptyReader{want: "baton: run record", seen: make(chan struct{})}
	go rd.run(ptmx)
	s := llmtest.NewServer(t, streamScript(nil))
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code := run(context.Background(), []string{"ask", "--planner", "full", "--doc", exampleDoc, "--stream", "--runs-dir", t.TempDir(), "What happened?"},
		strings.NewReader(""), tty, tty)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, rd.text())
	}
	select {
	case <-rd.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("the run's last line never reached the terminal:\n%q", rd.text())
	}
	got := rd.text()
	first := strings.Index(got, streamPieces[0])
	if first < 0 || !strings.Contains(got, "ask: plan") {
		t.Fatalf("no progress block or no answer on the terminal:\n%q", got)
	}
	if after := got[first:]; strings.Contains(after, "\x1b[") {
		t.Errorf("the progress block was redrawn after the answer began:\n%q", after)
	}
	if strings.Count(got, streamAnswer) != 1 {
		t.Errorf("the answer is not on the terminal exactly once:\n%q", got)
	}
}
