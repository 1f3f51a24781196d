package llm

import (
	"testing"

	"github.com/baton-dev/baton/tokens"
)

func TestEstimateTokens(t *testing.T) {
	sys := "You extract facts from the context you are given."
	a, b := "What was the revenue in 2024?", "It was 4.2 million."
	tests := []struct {
		name string
		req  *Request
		want int
	}{
		{"nil", nil, 0},
		{"prompt and reply budget", &Request{System: sys, MaxTokens: 500,
			Messages: []Message{{Role: RoleUser, Content: a}, {Role: RoleAssistant, Content: b}}},
			tokens.Count(sys) + tokens.Count(a) + tokens.Count(b) + 500},
		{"negative max tokens counts as none", &Request{MaxTokens: -5, Messages: []Message{{Role: RoleUser, Content: a}}},
			tokens.Count(a)},
		{"older models count with their own encoding", &Request{Model: "gpt-4", Messages: []Message{{Role: RoleUser, Content: a}}},
			tokens.ForModel("gpt-4").Count(a)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.req); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
			if tt.req != nil && len(tt.req.Messages) > 0 && EstimateTokens(tt.req) <= tt.req.MaxTokens {
				t.Errorf("estimate ignores the prompt")
			}
		})
	}
}
