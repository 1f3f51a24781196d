package modelalias

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dev/baton/tokens"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		provider, name string
		want           string
		err            bool
	}{
		{"anthropic", "opus", "claude-opus-4-5", false},
		{"anthropic", "Sonnet", "claude-sonnet-4-5", false},
		{"anthropic", " haiku ", "claude-haiku-4-5", false},
		{"anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1-20250805", false},
		{"anthropic", "inherit", "", false},
		{"anthropic", "", "", false},
		{"anthropic", "gpt-4o", "", true}, // not a model Anthropic serves
		{"anthropic", "fast", "", true},   // no such alias
		{"openai", "opus", "", true},      // a Claude tier has no OpenAI equivalent
		{"openai", "gpt-4.1", "gpt-4.1", false},
		{"openai", "anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5", false}, // a gateway's own name
		{"ollama", "haiku", "", true},
		{"ollama", "mistral", "mistral", false},
		{"ollama", "qwen3:8b", "qwen3:8b", false},
		{"ollama", "inherit", "", false},
		{"", "sonnet", "", true}, // no provider known to map it
		{"", "some-model", "some-model", false},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.provider, tt.name)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q, error %v", tt.provider, tt.name, got, err, tt.want, tt.err)
		}
		if err != nil && (!errors.Is(err, ErrNotHonoured) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), strings.TrimSpace(tt.name))) {
			t.Errorf("Resolve(%q, %q) error %q: want one line naming the model and wrapping ErrNotHonoured", tt.provider, tt.name, err)
		}
	}
}

// Every alias names a model whose window baton knows, so a step's budget is
// its own model's, not a guess.
func TestAliasesHaveKnownWindows(t *testing.T) {
	for _, p := range []string{Anthropic} {
		for alias, model := range Aliases(p) {
			if _, known := tokens.Window(model, 0); !known {
				t.Errorf("%s alias %s -> %s: window unknown to package tokens", p, alias, model)
			}
		}
	}
	if len(Aliases(Anthropic)) != 3 || len(Aliases("openai")) != 0 {
		t.Errorf("alias tables: anthropic %v, openai %v", Aliases(Anthropic), Aliases("openai"))
	}
}
