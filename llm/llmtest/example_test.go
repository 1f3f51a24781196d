package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
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

// An agent loop drives native tool calling: generate, run the calls, append
// the round, until the model answers without calling a tool. The server
// records what the model was sent back.
func Example_toolLoop() {
	s := llmtest.New(llmtest.Sequence(
		llmtest.CallTools(llmtest.Call("read_file", `{"path":"notes.md"}`)),
		llmtest.Text("The notes say: ship it."),
	))
	defer s.Close()

	m, _ := anthropic.New(anthropic.Config{BaseURL: s.AnthropicBaseURL(), Model: "claude-sonnet-4-5"})
	req := &llm.Request{
		Tools: []llm.Tool{{Name: "read_file", Description: "Read a workspace file.",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What do the notes say?"}},
	}
	for {
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			fmt.Println(err)
			return
		}
		if !resp.WantsTools() {
			fmt.Println(resp.Text)
			break
		}
		var results []llm.ToolResult
		for _, c := range resp.ToolCalls {
			var in struct{ Path string }
			if err := c.Decode(&in); err != nil {
				results = append(results, c.ErrorResult(err.Error()))
				continue
			}
			results = append(results, c.Result("contents of "+in.Path+": ship it"))
		}
		req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
	}
	last := s.Requests()[1]
	fmt.Println(last.ToolNames(), last.ToolResults()[0].Content)
	// Output:
	// The notes say: ship it.
	// [read_file] contents of notes.md: ship it
}
