package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

const half = "The answer is: the outage lasted"

// cuts are the ways a stream can end without being complete.
func cuts() map[string]llmtest.Reply {
	full := llmtest.Text(half + " 3 h 42 min, said the report in its summary.")
	return map[string]llmtest.Reply{
		"no end marker":    llmtest.NoEnd(full),
		"cut after events": llmtest.CutAfter(4, full),
		"cut mid line":     llmtest.CutMidLine(4, full),
		"cut at once":      llmtest.CutAfter(1, full),
	}
}

// A stream that ends before its end marker is retried, and the retry that
// completes is the answer.
func TestCutStreamIsRetried(t *testing.T) {
	for _, p := range protocols {
		for name, cut := range cuts() {
			t.Run(string(p)+"/"+name, func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Sequence(cut, llmtest.Text("complete")))
				var sl sleeps
				m := llm.WithRetry(guarded(t, s, p, 10*time.Second, 5*time.Second), llm.RetryPolicy{Sleep: sl.sleep})
				resp, err := m.Generate(hangGuard(t), streamed("hi"))
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Text != "complete" || resp.Attempts != 2 || s.Count() != 2 {
					t.Errorf("text %q after %d attempts (server saw %d), want \"complete\" after 2", resp.Text, resp.Attempts, s.Count())
				}
			})
		}
	}
}

// A stream that is always cut short fails once the attempts run out; the
// half text is never returned as an answer.
func TestAlwaysCutStreamFails(t *testing.T) {
	for _, p := range protocols {
		for name, cut := range cuts() {
			t.Run(string(p)+"/"+name, func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Always(cut))
				var sl sleeps
				m := llm.WithRetry(guarded(t, s, p, 10*time.Second, 5*time.Second), llm.RetryPolicy{MaxAttempts: 3, Sleep: sl.sleep})
				resp, err := m.Generate(hangGuard(t), streamed("hi"))
				if err == nil {
					t.Fatalf("Generate succeeded with %q", resp.Text)
				}
				if !errors.Is(err, llm.ErrIncomplete) || !strings.Contains(err.Error(), "3 attempts") {
					t.Errorf("error %q, want an incomplete response after 3 attempts", err)
				}
				if s.Count() != 3 {
					t.Errorf("server saw %d attempts, want 3", s.Count())
				}
			})
		}
	}
}

// A response with no text and no tool calls is not an empty success.
func TestEmptyTextIsInvalid(t *testing.T) {
	for _, p := range protocols {
		for _, stream := range []bool{false, true} {
			name := string(p) + "/json"
			if stream {
				name = string(p) + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("")))
				req := request("hi")
				req.Stream = stream
				resp, err := client(t, s, p).Generate(context.Background(), req)
				var pe *llm.ProviderError
				if !errors.As(err, &pe) || pe.Type != "invalid_response" {
					t.Fatalf("Generate = %+v, %v; want an invalid_response error", resp, err)
				}
			})
		}
	}
}
