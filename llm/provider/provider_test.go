package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/provider"
)

const secret = "sk-test-SECRET-0123456789"

// closedAddr is a host:port where nothing listens, so an Ollama probe there
// fails at once.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolvePrecedence(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Echo("echo: "))
	s.SetModels("qwen3:8b", "llama3.2:latest")
	noOllama := closedAddr(t)

	tests := []struct {
		name         string
		opts         provider.Options
		env          map[string]string
		wantProvider string
		wantModel    string
		wantBase     string
		wantSource   string
		// call says which wire protocol a Generate must reach the fake
		// server with; "" skips the call (the base URL is a real service).
		call llmtest.Protocol
	}{
		{
			name:         "anthropic key alone",
			env:          map[string]string{"ANTHROPIC_API_KEY": secret, "OLLAMA_HOST": noOllama},
			wantProvider: "anthropic", wantModel: provider.DefaultAnthropicModel,
			wantBase: provider.DefaultAnthropicBaseURL, wantSource: "ANTHROPIC_API_KEY",
		},
		{
			name:         "anthropic key and base URL",
			env:          map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": s.AnthropicBaseURL() + "/"},
			wantProvider: "anthropic", wantModel: provider.DefaultAnthropicModel,
			wantBase: s.AnthropicBaseURL(), wantSource: "ANTHROPIC_API_KEY", call: llmtest.Anthropic,
		},
		{
			name:         "anthropic wins over openai",
			env:          map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": s.AnthropicBaseURL(), "OPENAI_API_KEY": "other"},
			wantProvider: "anthropic", wantModel: provider.DefaultAnthropicModel,
			wantBase: s.AnthropicBaseURL(), wantSource: "ANTHROPIC_API_KEY", call: llmtest.Anthropic,
		},
		{
			name:         "openai key",
			env:          map[string]string{"OPENAI_API_KEY": secret},
			wantProvider: "openai", wantModel: provider.DefaultOpenAIModel,
			wantBase: provider.DefaultOpenAIBaseURL, wantSource: "OPENAI_API_KEY",
		},
		{
			name:         "openai base URL without key",
			env:          map[string]string{"OPENAI_BASE_URL": s.OpenAIBaseURL()},
			opts:         provider.Options{Model: "local-model"},
			wantProvider: "openai", wantModel: "local-model",
			wantBase: s.OpenAIBaseURL(), wantSource: "OPENAI_BASE_URL", call: llmtest.OpenAI,
		},
		{
			name:         "openai wins over ollama",
			env:          map[string]string{"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": s.OpenAIBaseURL(), "OLLAMA_HOST": s.URL()},
			wantProvider: "openai", wantModel: provider.DefaultOpenAIModel,
			wantBase: s.OpenAIBaseURL(), wantSource: "OPENAI_API_KEY", call: llmtest.OpenAI,
		},
		{
			name:         "ollama found, first model",
			env:          map[string]string{"OLLAMA_HOST": s.URL()},
			wantProvider: "ollama", wantModel: "qwen3:8b",
			wantBase: s.URL(), wantSource: "OLLAMA_HOST", call: llmtest.Ollama,
		},
		{
			name:         "ollama host as host:port",
			env:          map[string]string{"OLLAMA_HOST": strings.TrimPrefix(s.URL(), "http://")},
			opts:         provider.Options{Model: "llama3.2:latest"},
			wantProvider: "ollama", wantModel: "llama3.2:latest",
			wantBase: s.URL(), wantSource: "OLLAMA_HOST", call: llmtest.Ollama,
		},
		{
			name:         "provider flag beats the environment",
			opts:         provider.Options{Provider: "OpenAI", Model: "m1"},
			env:          map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": secret, "OPENAI_BASE_URL": s.OpenAIBaseURL()},
			wantProvider: "openai", wantModel: "m1",
			wantBase: s.OpenAIBaseURL(), wantSource: "--provider", call: llmtest.OpenAI,
		},
		{
			name:         "base URL flag beats the environment variable",
			opts:         provider.Options{Provider: "anthropic", BaseURL: s.AnthropicBaseURL()},
			env:          map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": "http://wrong.invalid"},
			wantProvider: "anthropic", wantModel: provider.DefaultAnthropicModel,
			wantBase: s.AnthropicBaseURL(), wantSource: "--provider", call: llmtest.Anthropic,
		},
		{
			name:         "base URL flag alone means an OpenAI-compatible server",
			opts:         provider.Options{BaseURL: s.OpenAIBaseURL(), Model: "m2"},
			env:          map[string]string{"ANTHROPIC_API_KEY": "a"},
			wantProvider: "openai", wantModel: "m2",
			wantBase: s.OpenAIBaseURL(), wantSource: "--base-url", call: llmtest.OpenAI,
		},
		{
			name:         "ollama flag with base URL",
			opts:         provider.Options{Provider: "ollama", BaseURL: s.URL()},
			env:          map[string]string{"ANTHROPIC_API_KEY": secret},
			wantProvider: "ollama", wantModel: "qwen3:8b",
			wantBase: s.URL(), wantSource: "--provider", call: llmtest.Ollama,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := provider.Resolve(context.Background(), tt.opts, envFrom(tt.env))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if sel.Provider != tt.wantProvider || sel.Model != tt.wantModel || sel.BaseURL != tt.wantBase || sel.Source != tt.wantSource {
				t.Errorf("got %s/%s at %s from %s, want %s/%s at %s from %s",
					sel.Provider, sel.Model, sel.BaseURL, sel.Source, tt.wantProvider, tt.wantModel, tt.wantBase, tt.wantSource)
			}
			for _, form := range []string{"%v", "%+v", "%#v", "%s"} {
				if out := fmt.Sprintf(form, sel); strings.Contains(out, secret) {
					t.Errorf("%s of the selection shows the API key: %s", form, out)
				}
			}
			if tt.call == "" {
				return
			}
			before := s.Count()
			resp, err := sel.LLM.Generate(context.Background(), &llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: tt.name}}, MaxTokens: 32})
			if err != nil {
				t.Fatalf("Generate through the selection: %v", err)
			}
			if resp.Text != "echo: "+tt.name {
				t.Errorf("reply %q", resp.Text)
			}
			reqs := s.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("server saw %d new requests, want 1", len(reqs)-before)
			}
			got := reqs[len(reqs)-1]
			if got.Protocol != tt.call || got.Model != tt.wantModel {
				t.Errorf("request went out as %s for model %q, want %s for %q", got.Protocol, got.Model, tt.call, tt.wantModel)
			}
			if k := tt.env["OPENAI_API_KEY"]; tt.call == llmtest.OpenAI && tt.wantProvider == "openai" && k != "" && got.APIKey() != k {
				t.Errorf("request carried key %q, want the OPENAI_API_KEY", got.APIKey())
			}
			if tt.call == llmtest.Anthropic && got.APIKey() != secret {
				t.Errorf("request carried key %q, want the ANTHROPIC_API_KEY", got.APIKey())
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	empty := llmtest.NewServer(t)
	empty.SetModels()
	notOllama := llmtest.NewServer(t)
	notOllama.DisableOllama()
	noOllama := closedAddr(t)

	tests := []struct {
		name     string
		opts     provider.Options
		env      map[string]string
		wantIs   error
		wantText []string
	}{
		{
			name:     "nothing configured",
			env:      map[string]string{"OLLAMA_HOST": noOllama},
			wantIs:   llm.ErrNoProvider,
			wantText: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", noOllama},
		},
		{
			name:     "a server that is not Ollama",
			env:      map[string]string{"OLLAMA_HOST": notOllama.URL()},
			wantIs:   llm.ErrNoProvider,
			wantText: []string{"ANTHROPIC_API_KEY", "OLLAMA_HOST"},
		},
		{
			name:     "ollama without models",
			env:      map[string]string{"OLLAMA_HOST": empty.URL()},
			wantText: []string{"lists no models", "ollama pull", "--model"},
		},
		{
			name:     "anthropic flag without key",
			opts:     provider.Options{Provider: "anthropic"},
			env:      map[string]string{"OPENAI_API_KEY": secret},
			wantIs:   provider.ErrMissingAPIKey,
			wantText: []string{"ANTHROPIC_API_KEY"},
		},
		{
			name:     "openai flag without key or base URL",
			opts:     provider.Options{Provider: "openai"},
			env:      map[string]string{"ANTHROPIC_API_KEY": secret},
			wantIs:   provider.ErrMissingAPIKey,
			wantText: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"},
		},
		{
			name:     "unknown provider",
			opts:     provider.Options{Provider: "gemini"},
			env:      map[string]string{"ANTHROPIC_API_KEY": secret},
			wantIs:   provider.ErrUnknownProvider,
			wantText: []string{`"gemini"`, "anthropic, openai or ollama"},
		},
		{
			name:     "ollama flag with no server",
			opts:     provider.Options{Provider: "ollama"},
			env:      map[string]string{"OLLAMA_HOST": noOllama},
			wantText: []string{"ollama", noOllama},
		},
		{
			name:     "bad OLLAMA_HOST port",
			opts:     provider.Options{Provider: "ollama"},
			env:      map[string]string{"OLLAMA_HOST": "localhost:99999"},
			wantText: []string{"OLLAMA_HOST", "invalid port"},
		},
		{
			name:     "bad base URL",
			opts:     provider.Options{Provider: "anthropic", BaseURL: "api.example.com/v1"},
			env:      map[string]string{"ANTHROPIC_API_KEY": secret},
			wantText: []string{"invalid base URL", "api.example.com/v1"},
		},
		{
			name:     "credentials in a base URL are not echoed",
			env:      map[string]string{"OPENAI_BASE_URL": "http://user:" + secret + "@host/v1"},
			wantText: []string{"invalid base URL", "[redacted]@host"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := provider.Resolve(context.Background(), tt.opts, envFrom(tt.env))
			if err == nil {
				t.Fatalf("Resolve chose %v, want an error", sel)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tt.wantIs)
			}
			msg := err.Error()
			for _, w := range tt.wantText {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error shows the API key: %q", msg)
			}
		})
	}
}

func TestResolveOllamaProbeIsShort(t *testing.T) {
	// A server that accepts the connection and never answers.
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	defer hang.CloseClientConnections()
	start := time.Now()
	_, err := provider.Resolve(context.Background(), provider.Options{}, envFrom(map[string]string{"OLLAMA_HOST": hang.URL}))
	if !errors.Is(err, llm.ErrNoProvider) {
		t.Errorf("error %v, want ErrNoProvider", err)
	}
	// The server never answers: without the probe's timeout this would
	// hang, so the bound is generous for a busy machine.
	if el := time.Since(start); el > provider.OllamaProbeTimeout+20*time.Second {
		t.Errorf("probe took %s", el)
	}
}

func TestResolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := provider.Resolve(ctx, provider.Options{}, envFrom(map[string]string{"OLLAMA_HOST": closedAddr(t)}))
	if err == nil || errors.Is(err, llm.ErrNoProvider) {
		t.Errorf("a cancelled resolve reported %v; it must not claim nothing is configured", err)
	}
}

func TestOllamaURL(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"", "http://127.0.0.1:11434", ""},
		{"127.0.0.1:11434", "http://127.0.0.1:11434", ""},
		{"gpu-box", "http://gpu-box:11434", ""},
		{"gpu-box:8080", "http://gpu-box:8080", ""},
		{":9999", "http://127.0.0.1:9999", ""},
		{"0.0.0.0", "http://127.0.0.1:11434", ""},
		{"0.0.0.0:11434", "http://127.0.0.1:11434", ""},
		{"[::1]:11434", "http://[::1]:11434", ""},
		{"::1", "http://[::1]:11434", ""},
		{"http://gpu-box", "http://gpu-box:80", ""},
		{"https://ollama.example.com", "https://ollama.example.com:443", ""},
		{"https://ollama.example.com/proxy/", "https://ollama.example.com:443/proxy", ""},
		{"HTTP://box:1234", "http://box:1234", ""},
		{"box:0", "", "invalid port"},
		{"box:abc", "", "invalid port"},
		{"ftp://box", "", "scheme"},
		{"bad host:1", "", "invalid host"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := provider.OllamaURL(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("OllamaURL(%q) = %q, %v; want an error about %s", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("OllamaURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}
