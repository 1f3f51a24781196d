package llm_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

// TestRetryObserver: the observer in a call's context hears that call's
// retries with the policy's wait, besides OnRetry; a call made without it
// is retried as before.
func TestRetryObserver(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(2*time.Second), llmtest.Text("ok"), llmtest.Text("again")))
	var sl sleeps
	var policy, own []time.Duration
	m := llm.WithRetry(client(t, s, llmtest.Anthropic), llm.RetryPolicy{Sleep: sl.sleep,
		OnRetry: func(_ int, d time.Duration, _ error) { policy = append(policy, d) }})
	var attempts []int
	ctx := llm.WithRetryObserver(context.Background(), func(attempt int, d time.Duration, err error) {
		attempts, own = append(attempts, attempt), append(own, d)
		if err == nil {
			t.Error("observer got no error")
		}
	})
	if _, err := m.Generate(ctx, request("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(attempts) != 1 || attempts[0] != 1 || len(own) != 1 || own[0] != policy[0] || own[0] < 2*time.Second {
		t.Errorf("observer saw attempts %v waits %v; the policy waited %v", attempts, own, policy)
	}
	if _, err := m.Generate(context.Background(), request("hi")); err != nil || len(attempts) != 1 {
		t.Errorf("a call without the observer: %v, observer calls %d", err, len(attempts))
	}
}
