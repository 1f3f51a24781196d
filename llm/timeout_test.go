package llm_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
)

// guarded builds the real provider client for protocol p against s, with
// baton's HTTP client at the given call and idle timeouts.
func guarded(t *testing.T, s *llmtest.Server, p llmtest.Protocol, call, idle time.Duration) llm.Model {
	t.Helper()
	hc := llm.NewHTTPClient(call, idle)
	var (
		m   llm.Model
		err error
	)
	switch p {
	case llmtest.Anthropic:
		m, err = anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: s.AnthropicBaseURL(), Model: "claude-test", HTTPClient: hc})
	default:
		m, err = openai.New(openai.Config{APIKey: "test-key", BaseURL: s.OpenAIBaseURL(), Model: "gpt-test", HTTPClient: hc})
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func streamed(text string) *llm.Request {
	r := request(text)
	r.Stream = true
	return r
}

// hangGuard is a context that ends a test which would otherwise hang; it is
// far longer than any timeout the tests set, so that it never decides one.
func hangGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A stream that stops sending is abandoned after the idle timeout and sent
// again; the second attempt succeeds.
func TestStalledStreamIsRetried(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Sequence(llmtest.StallAfter(2, llmtest.Text("half of it")), llmtest.Text("the whole answer")))
			var sl sleeps
			var why error
			m := llm.WithRetry(guarded(t, s, p, 10*time.Second, 200*time.Millisecond), llm.RetryPolicy{
				Sleep: sl.sleep, OnRetry: func(_ int, _ time.Duration, err error) { why = err }})
			resp, err := m.Generate(hangGuard(t), streamed("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "the whole answer" || resp.Attempts != 2 || s.Count() != 2 {
				t.Errorf("text %q after %d attempts, server saw %d; want the whole answer after 2", resp.Text, resp.Attempts, s.Count())
			}
			var pe *llm.ProviderError
			if !errors.Is(why, llm.ErrStreamStalled) || !errors.As(why, &pe) || pe.StatusCode != 0 {
				t.Errorf("retried because of %v, want a status-0 ProviderError for a stalled stream", why)
			}
		})
	}
}

// ": ping" comment lines are not content: a stream sending nothing else
// stalls all the same.
func TestPingsDoNotKeepAStreamAlive(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.PingForever(20*time.Millisecond)))
			var sl sleeps
			m := llm.WithRetry(guarded(t, s, p, 10*time.Second, 200*time.Millisecond), llm.RetryPolicy{MaxAttempts: 2, Sleep: sl.sleep})
			_, err := m.Generate(hangGuard(t), streamed("hi"))
			if !errors.Is(err, llm.ErrStreamStalled) {
				t.Fatalf("error %v, want a stalled stream", err)
			}
			if s.Count() != 2 {
				t.Errorf("server saw %d attempts, want 2", s.Count())
			}
		})
	}
}

// With no idle timeout, a stream kept alive by pings ends at the call
// timeout, which is retryable and distinct from cancellation.
func TestPingForeverEndsAtCallTimeout(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.PingForever(20*time.Millisecond)))
			var sl sleeps
			m := llm.WithRetry(guarded(t, s, p, time.Second, 0), llm.RetryPolicy{MaxAttempts: 2, Sleep: sl.sleep})
			_, err := m.Generate(hangGuard(t), streamed("hi"))
			var pe *llm.ProviderError
			if !errors.Is(err, llm.ErrCallTimeout) || !errors.As(err, &pe) || !pe.IsRetryable() {
				t.Fatalf("error %v, want a retryable call timeout", err)
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v looks like the caller's cancellation", err)
			}
			if s.Count() != 2 {
				t.Errorf("server saw %d attempts, want 2", s.Count())
			}
		})
	}
}

// A non-streamed call gets the call timeout too, not the SDK's ten minutes.
func TestSlowCallEndsAtCallTimeout(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Minute, "late")))
			// Counted on arrival: the server records a request the client
			// gave up on only once it notices.
			var arrived atomic.Int32
			s.OnRequest(func(llmtest.RecordedRequest) { arrived.Add(1) })
			var sl sleeps
			m := llm.WithRetry(guarded(t, s, p, 300*time.Millisecond, 200*time.Millisecond), llm.RetryPolicy{MaxAttempts: 2, Sleep: sl.sleep})
			_, err := m.Generate(hangGuard(t), request("hi"))
			if !errors.Is(err, llm.ErrCallTimeout) {
				t.Fatalf("error %v, want a call timeout", err)
			}
			if arrived.Load() != 2 || len(sl.waits()) != 1 {
				t.Errorf("server saw %d attempts and baton slept %d times, want 2 and 1", arrived.Load(), len(sl.waits()))
			}
		})
	}
}

// The caller's own cancellation during a stalled stream is never retried
// and never reported as a timeout.
func TestCancelDuringStallIsNotRetried(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.StallAfter(1, llmtest.Text("x"))))
	ctx, cancel := context.WithCancel(hangGuard(t))
	s.OnRequest(func(llmtest.RecordedRequest) { time.AfterFunc(50*time.Millisecond, cancel) })
	var sl sleeps
	m := llm.WithRetry(guarded(t, s, llmtest.Anthropic, 10*time.Second, 5*time.Second), llm.RetryPolicy{Sleep: sl.sleep})
	_, err := m.Generate(ctx, streamed("hi"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrStreamStalled) || errors.Is(err, llm.ErrCallTimeout) {
		t.Errorf("error %v, want context.Canceled only", err)
	}
	if s.Count() != 1 || len(sl.waits()) != 0 {
		t.Errorf("server saw %d attempts, baton slept %v; want 1 and none", s.Count(), sl.waits())
	}
}

// The idle timeout is for event streams only: a JSON response is not cut
// even by an idle timeout shorter than any read.
func TestIdleTimeoutIgnoresJSON(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("fine")))
	hc := llm.NewHTTPClient(10*time.Second, time.Nanosecond)
	m, err := openai.New(openai.Config{BaseURL: s.OpenAIBaseURL(), Model: "gpt-test", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(hangGuard(t), request("hi"))
	if err != nil || resp.Text != "fine" {
		t.Fatalf("Generate = %+v, %v", resp, err)
	}
}
