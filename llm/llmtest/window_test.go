package llmtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

// A request over the server's context window is refused with the
// provider's real 400 body; through the real SDK it is llm.ErrPromptTooLong,
// and the retry policy sends it once only. A request that fits is answered.
func TestContextWindowRefusesWithTheProvidersBody(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("fits")))
			s.SetContextWindow(1000)
			m := llm.WithRetry(newModel(t, p, s), llm.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }})

			small := simple("a short question")
			small.MaxTokens = 100
			if resp, err := m.Generate(context.Background(), small); err != nil || resp.Text != "fits" {
				t.Fatalf("a request that fits: %v, %v", resp, err)
			}

			for _, tc := range []struct {
				name      string
				prompt    int
				maxTokens int
				want      string
			}{
				{"prompt alone", 1200, 10, map[string]string{"anthropic": "prompt is too long", "openai": "maximum context length is 1000 tokens"}[p.name]},
				{"prompt and max_tokens", 700, 400, map[string]string{"anthropic": "exceed context limit", "openai": "maximum context length is 1000 tokens"}[p.name]},
			} {
				before := s.Count()
				req := simple("")
				req.System = longText(tc.prompt)
				req.MaxTokens = tc.maxTokens
				_, err := m.Generate(context.Background(), req)
				if !errors.Is(err, llm.ErrPromptTooLong) {
					t.Fatalf("%s: err = %v, want llm.ErrPromptTooLong", tc.name, err)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: err = %v, want the provider's message %q", tc.name, err, tc.want)
				}
				if n := s.Count() - before; n != 1 {
					t.Errorf("%s: %d requests sent, want 1 (never retried)", tc.name, n)
				}
				if st := s.Requests()[s.Count()-1].Status; st != http.StatusBadRequest {
					t.Errorf("%s: recorded status %d, want 400", tc.name, st)
				}
			}
		})
	}
}

// The real bodies, as the services send them, classify the same way, and
// other 400s do not.
func TestPromptTooLongClassifiesRealBodies(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			bodies := map[string]llmtest.Reply{
				"anthropic": llmtest.Fail(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
				"openai": {Status: 400, ErrorType: "context_length_exceeded",
					ErrorMessage: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages."},
			}
			s := llmtest.NewServer(t, llmtest.Sequence(bodies[p.name], llmtest.Fail(400, "invalid_request_error", "max_tokens: must be positive")))
			m := newModel(t, p, s)
			if _, err := m.Generate(context.Background(), simple("x")); !errors.Is(err, llm.ErrPromptTooLong) {
				t.Errorf("the real body: err = %v, want llm.ErrPromptTooLong", err)
			}
			if _, err := m.Generate(context.Background(), simple("x")); err == nil || errors.Is(err, llm.ErrPromptTooLong) {
				t.Errorf("another 400: err = %v, want an error that is not llm.ErrPromptTooLong", err)
			}
		})
	}
}
