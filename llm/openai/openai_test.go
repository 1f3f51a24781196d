package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

func TestUsageNormalisation(t *testing.T) {
	tests := []struct {
		prompt, cached, completion int64
		want                       llm.Usage
	}{
		{100, 0, 7, llm.Usage{InputTokens: 100, OutputTokens: 7}},
		{100, 30, 7, llm.Usage{InputTokens: 70, CacheReadInputTokens: 30, OutputTokens: 7}},
		{2048, 2048, 1, llm.Usage{InputTokens: 0, CacheReadInputTokens: 2048, OutputTokens: 1}},
	}
	for _, tc := range tests {
		var u sdk.CompletionUsage
		u.PromptTokens, u.CompletionTokens = tc.prompt, tc.completion
		u.PromptTokensDetails.CachedTokens = tc.cached
		got := usage(u)
		if got != tc.want || got.PromptTokens() != tc.prompt {
			t.Errorf("usage(%d,%d,%d) = %+v, want %+v", tc.prompt, tc.cached, tc.completion, got, tc.want)
		}
	}
}

func TestSchemaNameDefaults(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("{}")))
	m, err := New(Config{BaseURL: s.OpenAIBaseURL(), Model: "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), &llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: "q"}},
		JSONSchema: &llm.Schema{Schema: map[string]any{"type": "object"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.SchemaName() != "response" || r.Header.Get("Authorization") != "" {
		t.Errorf("schema name %q, authorization %q", r.SchemaName(), r.Header.Get("Authorization"))
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"localhost:11434/v1", "ftp://x"} {
		if _, err := New(Config{BaseURL: u}); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("New(BaseURL %q): error %v", u, err)
		}
	}
}

// Some OpenAI-compatible servers stream tool calls in shapes the fake does
// not: every call at index 0, each sent whole, and no type field. Each must
// still come back as a call of its own.
func TestStreamedToolCallsFromCompatibleServers(t *testing.T) {
	chunks := []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"read_file","arguments":"{\"path\":\"a.md\"}"}}]}}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"search","arguments":"{\"query\":\"q\"}"}}]}}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.2","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	m, err := New(Config{BaseURL: srv.URL + "/v1", Model: "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), &llm.Request{Stream: true,
		Tools:    []llm.Tool{{Name: "read_file"}, {Name: "search"}},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_a", Name: "read_file", Input: json.RawMessage(`{"path":"a.md"}`)},
		{ID: "call_b", Name: "search", Input: json.RawMessage(`{"query":"q"}`)},
	}
	if d := cmp.Diff(want, resp.ToolCalls); d != "" || resp.StopReason != "tool_calls" {
		t.Errorf("tool calls (-want +got):\n%s stop %q", d, resp.StopReason)
	}
}

func TestToolCallWithoutTypeField(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","created":1,"model":"llama3.2","choices":[{"index":0,"finish_reason":"tool_calls",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","function":{"name":"read_file","arguments":"{\"path\":\"a.md\"}"}}]}}],
		"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	m, err := New(Config{BaseURL: srv.URL + "/v1", Model: "llama3.2"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), &llm.Request{Tools: []llm.Tool{{Name: "read_file"}},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_a" || string(resp.ToolCalls[0].Input) != `{"path":"a.md"}` {
		t.Errorf("tool calls %+v", resp.ToolCalls)
	}
}
