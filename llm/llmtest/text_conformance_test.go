package llmtest_test

// Streamed text (Request.OnText) and its restart after a retried attempt
// (Request.OnRestart), for every provider.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/ollama"
)

// textProviders are the providers plus Ollama's native API, which streams
// newline-delimited JSON instead of server-sent events.
var textProviders = append(append([]provider{}, providers...), provider{
	name: "ollama", protocol: llmtest.Ollama, model: "llama3.2:latest", stop: "stop",
	new: func(s *llmtest.Server, c config) (llm.Model, error) {
		return ollama.New(ollama.Config{BaseURL: s.URL(), Model: c.model, NumCtx: 8192})
	},
})

// textLog gathers what OnText and OnRestart were told, in order.
type textLog struct {
	mu     sync.Mutex
	deltas []string
	events []string // "text" or "restart", in order
	first  chan struct{}
	once   sync.Once
}

func newTextLog() *textLog { return &textLog{first: make(chan struct{})} }

func (l *textLog) onText(d string) {
	l.mu.Lock()
	l.deltas = append(l.deltas, d)
	l.events = append(l.events, "text")
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
}

func (l *textLog) onRestart() {
	l.mu.Lock()
	l.events = append(l.events, "restart")
	l.deltas = append(l.deltas, "|")
	l.mu.Unlock()
}

// The text arrives piece by piece while the reply is still being written:
// the server holds its last piece until the client has seen the first. A
// request with OnText streams even when Stream is false.
func TestConformanceOnTextArrivesInPieces(t *testing.T) {
	pieces := []string{"The outage ", "lasted ", "3 h ", "42 min."}
	for _, p := range textProviders {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			log := newTextLog()
			held := make(chan bool, 1)
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Pieces: pieces, BeforePiece: func(i int) {
				if i != len(pieces)-1 {
					return
				}
				select {
				case <-log.first:
					held <- true
				case <-time.After(30 * time.Second):
					held <- false
				}
			}}))
			req := simple("How long was the outage?")
			req.OnText = log.onText
			resp, err := newModel(t, p, s).Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			// Generate has returned, so a streamed reply has passed the
			// hold already.
			select {
			case ok := <-held:
				if !ok {
					t.Fatal("the first piece never reached OnText before the last was written")
				}
			default:
				t.Fatal("the reply was not streamed piece by piece")
			}
			if diff := cmp.Diff(pieces, log.deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if resp.Text != strings.Join(pieces, "") {
				t.Errorf("text %q", resp.Text)
			}
			if !s.Requests()[0].Stream {
				t.Error("a request with OnText was not streamed")
			}
		})
	}
}

// A stream cut short after some text, then retried: OnRestart comes between
// the two attempts' text, so that what follows it is the whole answer. A
// failure before any text needs no restart.
func TestConformanceOnRestartAfterCutStream(t *testing.T) {
	pieces := []string{"one ", "two ", "three ", "four ", "five"}
	for _, p := range textProviders {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.NewServer(t, llmtest.Sequence(
				llmtest.Overloaded(),
				llmtest.CutAfter(4, llmtest.Reply{Pieces: pieces}),
				llmtest.Reply{Pieces: pieces}))
			m := llm.WithRetry(newModel(t, p, s), llm.RetryPolicy{MaxAttempts: 4,
				Sleep: func(context.Context, time.Duration) error { return nil }})
			log := newTextLog()
			req := simple("count")
			req.OnText, req.OnRestart = log.onText, log.onRestart
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Attempts != 3 {
				t.Errorf("attempts %d, want 3", resp.Attempts)
			}
			restarts := strings.Count(strings.Join(log.events, " "), "restart")
			if restarts != 1 || log.events[0] != "text" {
				t.Fatalf("events %v: want text of the cut attempt, one restart, then the answer", log.events)
			}
			all := strings.Join(log.deltas, "")
			_, after, _ := strings.Cut(all, "|")
			if after != resp.Text || resp.Text != strings.Join(pieces, "") {
				t.Errorf("text after the restart %q, response %q", after, resp.Text)
			}
		})
	}
}
