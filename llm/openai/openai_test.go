package openai

import (
	"context"
	"strings"
	"testing"

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
