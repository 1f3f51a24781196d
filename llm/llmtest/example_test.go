package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
)

// A test scripts the server, points a real adapter at it and checks both the
// answer and what the server recorded.
func Example() {
	s := llmtest.New(
		// The first request is rate limited, every later one answered.
		llmtest.Always(llmtest.RateLimit(2*time.Second)).Limit(1),
		llmtest.Always(llmtest.Text("Revenue was $4.2M.")).WhenSystem("analyst"),
	)
	defer s.Close()

	m, _ := openai.New(openai.Config{BaseURL: s.OpenAIBaseURL(), Model: "gpt-4o-mini"})
	req := &llm.Request{System: "You are an analyst.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What was the revenue?"}}}

	_, err := m.Generate(context.Background(), req)
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		fmt.Println(pe.StatusCode, pe.RetryAfter, pe.IsRetryable())
	}
	resp, _ := m.Generate(context.Background(), req)
	fmt.Println(resp.Text)
	fmt.Println(s.Count(), s.TotalUsage() == resp.Usage)
	// Output:
	// 429 2s true
	// Revenue was $4.2M.
	// 2 true
}
