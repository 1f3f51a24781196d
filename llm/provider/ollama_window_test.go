package provider_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/provider"
)

// Ollama's OpenAI-compatible endpoint ignores any window a request asks
// for and silently truncates at the server's default; baton talks to
// Ollama's native API instead and names the window on every request, the
// same window the Selection tells callers to check against.
func TestOllamaRequestsCarryTheWindow(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		window int // --window
		ctxLen int // what /api/show reports
		want   int
	}{
		{"known model under the cap", "llama3:8b", 0, 8192, 8192},
		{"known model over the cap", "qwen3:8b", 0, 40960, provider.DefaultOllamaWindow},
		{"unknown model", "mystery:1b", 0, llmtest.DefaultModelContextLength, provider.DefaultOllamaWindow},
		{"the model's own length is smaller", "llama3.2:latest", 0, 16384, 16384},
		{"--window", "llama3.2:latest", 65536, 131072, 65536},
		{"--window over the model's length", "llama3.2:latest", 200000, 131072, 131072},
		{"no context length reported", "llama3.2:latest", 0, 0, provider.DefaultOllamaWindow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			s.SetModels(tc.model)
			s.SetModelContextLength(tc.ctxLen)
			sel, err := provider.Resolve(context.Background(), provider.Options{Provider: "ollama", BaseURL: s.URL(), Window: tc.window}, envFrom(nil))
			if err != nil {
				t.Fatal(err)
			}
			if sel.Window != tc.want || sel.ModelContextLength != tc.ctxLen {
				t.Errorf("window %d (model length %d), want %d (%d)", sel.Window, sel.ModelContextLength, tc.want, tc.ctxLen)
			}
			if _, err := sel.LLM.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			r := s.Requests()[0]
			if r.Protocol != llmtest.Ollama || r.Path != "/api/chat" || r.NumCtx != tc.want {
				t.Errorf("request went to %s with num_ctx %d, want /api/chat with %d", r.Path, r.NumCtx, tc.want)
			}
		})
	}
}

// The hosted providers' windows are their own: the Selection names none.
func TestHostedProvidersNameNoWindow(t *testing.T) {
	s := llmtest.NewServer(t)
	sel, err := provider.Resolve(context.Background(), provider.Options{Provider: "openai", BaseURL: s.OpenAIBaseURL(), Window: 5000}, envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if sel.Window != 0 {
		t.Errorf("window %d", sel.Window)
	}
}
