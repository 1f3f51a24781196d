package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

func TestMinCacheableTokens(t *testing.T) {
	tests := []struct {
		model string
		want  int
	}{
		{"claude-sonnet-4-5", 1024},
		{"claude-opus-4-1", 1024},
		{"claude-haiku-4-5", 2048},
		{"claude-3-5-haiku-latest", 2048},
		{"Claude-HAIKU-4", 2048},
		{"some-gateway-model", 1024},
	}
	for _, tc := range tests {
		if got := MinCacheableTokens(tc.model); got != tc.want {
			t.Errorf("MinCacheableTokens(%q) = %d, want %d", tc.model, got, tc.want)
		}
	}
}

// The cache marker follows the configured counter exactly at the boundary.
func TestCacheControlBoundary(t *testing.T) {
	tests := []struct {
		model  string
		count  int
		cached bool
	}{
		{"claude-sonnet-4-5", 1023, false},
		{"claude-sonnet-4-5", 1024, true},
		{"claude-haiku-4-5", 2047, false},
		{"claude-haiku-4-5", 2048, true},
	}
	for _, tc := range tests {
		s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
		n := tc.count
		m, err := New(Config{BaseURL: s.AnthropicBaseURL(), Model: tc.model,
			CountTokens: func(string) int { return n }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(context.Background(), &llm.Request{System: "skill prompt",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Requests()[0].SystemCacheControl; got != tc.cached {
			t.Errorf("%s at %d tokens: cache_control %v, want %v", tc.model, tc.count, got, tc.cached)
		}
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"api.anthropic.com", "ftp://x", "://"} {
		if _, err := New(Config{BaseURL: u}); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("New(BaseURL %q): error %v", u, err)
		}
	}
}
