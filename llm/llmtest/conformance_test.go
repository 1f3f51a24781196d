package llmtest_test

// The conformance suite: one table of cases, run against every provider
// adapter through its real SDK and the wire-level fake server. A behaviour
// baton relies on (usage mapping, error classification, cancellation, secret
// hygiene) is asserted once here and holds for every backend.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/tokens"
)

const testKey = "sk-test-0123456789abcdef"

type provider struct {
	name     string
	protocol llmtest.Protocol
	model    string // a model name typical for the provider
	stop     string // the provider's word for a natural stop
	rateType string // the provider's rate-limit error type
	new      func(s *llmtest.Server, cfg config) (llm.Model, error)
}

type config struct {
	key, model string
}

var providers = []provider{
	{
		name: "anthropic", protocol: llmtest.Anthropic, model: "claude-sonnet-4-5", stop: "end_turn",
		rateType: "rate_limit_error",
		new: func(s *llmtest.Server, c config) (llm.Model, error) {
			return anthropic.New(anthropic.Config{APIKey: c.key, BaseURL: s.AnthropicBaseURL(), Model: c.model})
		},
	},
	{
		name: "openai", protocol: llmtest.OpenAI, model: "gpt-4o-mini", stop: "stop",
		rateType: "rate_limit_exceeded",
		new: func(s *llmtest.Server, c config) (llm.Model, error) {
			return openai.New(openai.Config{APIKey: c.key, BaseURL: s.OpenAIBaseURL(), Model: c.model})
		},
	},
}

func newModel(t *testing.T, p provider, s *llmtest.Server) llm.Model {
	t.Helper()
	m, err := p.new(s, config{key: testKey, model: p.model})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func simple(text string) *llm.Request {
	return &llm.Request{System: "You are a careful analyst.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// longText is a system prompt of at least n tokens.
func longText(n int) string {
	var b strings.Builder
	for tokens.Count(b.String()) < n {
		b.WriteString("Read the section and report every figure it states, with its unit. ")
	}
	return b.String()
}

type check struct {
	name  string
	rules []llmtest.Rule
	req   func(p provider) *llm.Request
	// verify gets what Generate returned and the server's record.
	verify func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server)
}

func mustOK(t *testing.T, resp *llm.Response, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp == nil {
		t.Fatal("Generate returned neither response nor error")
	}
}

func providerError(t *testing.T, err error) *llm.ProviderError {
	t.Helper()
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *llm.ProviderError", err, err)
	}
	return pe
}

func onlyRequest(t *testing.T, s *llmtest.Server) llmtest.RecordedRequest {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != 1 {
		// The SDKs' own retries must be off: baton's policy counts attempts.
		t.Fatalf("server saw %d requests, want exactly 1", len(reqs))
	}
	return reqs[0]
}

func computedUsage(req *llm.Request, reply string) llm.Usage {
	in := tokens.Count(req.System)
	for _, m := range req.Messages {
		in += tokens.Count(m.Content)
	}
	return llm.Usage{InputTokens: int64(in), OutputTokens: int64(tokens.Count(reply))}
}

var checks = []check{
	{
		name:  "plain text",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("Revenue was $4.2M in 2024."))},
		req:   func(provider) *llm.Request { return simple("What was the revenue?") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			if resp.Text != "Revenue was $4.2M in 2024." || resp.StopReason != p.stop || resp.ID == "" || resp.Model != p.model {
				t.Errorf("response %+v", resp)
			}
			r := onlyRequest(t, s)
			if r.Protocol != p.protocol || r.Model != p.model {
				t.Errorf("request went to %s with model %q", r.Protocol, r.Model)
			}
			if d := cmp.Diff([]llm.Message{{Role: llm.RoleUser, Content: "What was the revenue?"}}, r.Messages); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
		},
	},
	{
		name:  "multi-turn conversation keeps roles and order",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req: func(provider) *llm.Request {
			return &llm.Request{Messages: []llm.Message{
				{Role: llm.RoleUser, Content: "first"}, {Role: llm.RoleAssistant, Content: "second"},
				{Role: llm.RoleUser, Content: "third"}}}
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			want := []llm.Message{{Role: llm.RoleUser, Content: "first"}, {Role: llm.RoleAssistant, Content: "second"},
				{Role: llm.RoleUser, Content: "third"}}
			if d := cmp.Diff(want, r.Messages); d != "" || r.System != "" {
				t.Errorf("messages (-want +got):\n%s system %q", d, r.System)
			}
		},
	},
	{
		name:  "computed usage is the real token count",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("A short answer of several tokens."))},
		req:   func(provider) *llm.Request { return simple("Summarise the risks section.") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			want := computedUsage(simple("Summarise the risks section."), "A short answer of several tokens.")
			if resp.Usage != want || s.TotalUsage() != want {
				t.Errorf("usage %+v, server total %+v, want %+v", resp.Usage, s.TotalUsage(), want)
			}
		},
	},
	{
		name: "reported usage maps field by field",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Reply{Text: "x",
			Usage: &llm.Usage{InputTokens: 70, CacheReadInputTokens: 30, OutputTokens: 9}})},
		req: func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			// For OpenAI this proves the normalisation: prompt_tokens=100
			// with cached_tokens=30 becomes input 70 + cache read 30.
			want := llm.Usage{InputTokens: 70, CacheReadInputTokens: 30, OutputTokens: 9}
			if resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
		},
	},
	{
		name:  "streaming returns the same text and usage",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("Streaming answers arrive in several pieces, joined back together."))},
		req: func(provider) *llm.Request {
			r := simple("Stream it.")
			r.Stream = true
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			text := "Streaming answers arrive in several pieces, joined back together."
			if resp.Text != text || resp.StopReason != p.stop || resp.ID == "" || resp.Model != p.model {
				t.Errorf("response %+v", resp)
			}
			r := s.Requests()[0]
			if want := computedUsage(simple("Stream it."), text); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
			if !r.Stream || (p.protocol == llmtest.OpenAI && !r.IncludeUsage) {
				t.Errorf("stream=%v include_usage=%v", r.Stream, r.IncludeUsage)
			}
		},
	},
	{
		name: "streamed usage with cache reads",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Reply{Text: "cached",
			Usage: &llm.Usage{InputTokens: 12, CacheReadInputTokens: 2000, OutputTokens: 3}})},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.Stream = true
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			if want := (llm.Usage{InputTokens: 12, CacheReadInputTokens: 2000, OutputTokens: 3}); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
		},
	},
	{
		name:  "system prompt, temperature and max tokens are sent",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok")).WhenSystem("You are a careful analyst.")},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.Temperature = llm.Float(0.3)
			r.MaxTokens = 321
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			if r.System != "You are a careful analyst." || r.Temperature == nil || *r.Temperature != 0.3 || r.MaxTokens != 321 {
				t.Errorf("system %q temperature %v max tokens %d", r.System, r.Temperature, r.MaxTokens)
			}
			if r.ResponseFormat != nil {
				t.Errorf("response format sent without a schema: %s", r.ResponseFormat)
			}
		},
	},
	{
		name:  "max tokens defaults only where the API requires it",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			want := 0
			if p.protocol == llmtest.Anthropic {
				want = anthropic.DefaultMaxTokens
			}
			if r.MaxTokens != want || r.Temperature != nil {
				t.Errorf("max tokens %d (want %d), temperature %v", r.MaxTokens, want, r.Temperature)
			}
		},
	},
	{
		name:  "short system prompt is not marked for caching",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.System = longText(900)
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			if onlyRequest(t, s).SystemCacheControl {
				t.Error("cache_control sent below the minimum cacheable length")
			}
		},
	},
	{
		name:  "long system prompt is marked for caching",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.System = longText(1100)
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			// Only Anthropic has explicit cache markers; OpenAI caches
			// prefixes by itself.
			if want := p.protocol == llmtest.Anthropic; r.SystemCacheControl != want {
				t.Errorf("cache_control %v, want %v", r.SystemCacheControl, want)
			}
			if r.System != longText(1100) {
				t.Error("system prompt altered")
			}
		},
	},
	{
		name:  "haiku needs a longer prompt before caching",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.Model = "claude-haiku-4-5"
			r.System = longText(1500)
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			if r.SystemCacheControl || r.Model != "claude-haiku-4-5" {
				t.Errorf("cache_control %v model %q", r.SystemCacheControl, r.Model)
			}
		},
	},
	{
		name:  "JSON schema is sent as structured output",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text(`{"subtasks":[]}`))},
		req: func(provider) *llm.Request {
			r := simple("Plan.")
			r.JSONSchema = &llm.Schema{Name: "plan", Schema: map[string]any{
				"type": "object", "properties": map[string]any{"subtasks": map[string]any{"type": "array"}}}}
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			r := onlyRequest(t, s)
			var rf struct {
				Type       string         `json:"type"`
				Schema     map[string]any `json:"schema"`
				JSONSchema struct {
					Name   string         `json:"name"`
					Schema map[string]any `json:"schema"`
				} `json:"json_schema"`
			}
			if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil {
				t.Fatalf("response format %q: %v", r.ResponseFormat, err)
			}
			schema := rf.Schema
			if p.protocol == llmtest.OpenAI {
				schema = rf.JSONSchema.Schema
				if rf.JSONSchema.Name != "plan" {
					t.Errorf("schema name %q", rf.JSONSchema.Name)
				}
			}
			if rf.Type != "json_schema" || schema["type"] != "object" || schema["properties"] == nil {
				t.Errorf("response format %s", r.ResponseFormat)
			}
		},
	},
	{
		name:  "429 carries retry-after and is retryable",
		rules: []llmtest.Rule{llmtest.Always(llmtest.RateLimit(1500 * time.Millisecond))},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 429 || pe.RetryAfter != 1500*time.Millisecond || !pe.IsRetryable() ||
				pe.Type != p.rateType || pe.Provider != p.name {
				t.Errorf("provider error %+v", pe)
			}
			onlyRequest(t, s)
		},
	},
	{
		name:  "500 is retryable",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Fail(500, "", "internal trouble"))},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 500 || !pe.IsRetryable() || pe.Message != "internal trouble" || pe.RetryAfter != 0 {
				t.Errorf("provider error %+v", pe)
			}
			onlyRequest(t, s)
		},
	},
	{
		name:  "529 overloaded is retryable",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Overloaded())},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 529 || !pe.IsRetryable() {
				t.Errorf("provider error %+v", pe)
			}
			if p.protocol == llmtest.Anthropic && pe.Type != "overloaded_error" {
				t.Errorf("type %q", pe.Type)
			}
			onlyRequest(t, s)
		},
	},
	{
		name:  "400 is not retryable and keeps the provider's message",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Fail(400, "invalid_request_error", "temperature: must be at most 1"))},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 400 || pe.IsRetryable() || pe.Type != "invalid_request_error" ||
				!strings.Contains(err.Error(), "temperature: must be at most 1") {
				t.Errorf("provider error %+v: %v", pe, err)
			}
		},
	},
	{
		name:  "garbage body is a clear, non-retryable error",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Garbage())},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 200 || pe.Type != "invalid_response" || pe.IsRetryable() ||
				!strings.Contains(err.Error(), "invalid response") || strings.Contains(err.Error(), "\n") {
				t.Errorf("provider error %+v: %q", pe, err)
			}
		},
	},
	{
		name:  "garbage stream is a clear, non-retryable error",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Garbage())},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.Stream = true
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 200 || pe.Type != "invalid_response" || pe.IsRetryable() {
				t.Errorf("provider error %+v: %q", pe, err)
			}
		},
	},
	{
		name:  "no content is a clear, non-retryable error",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Reply{Empty: true})},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 200 || pe.Type != "invalid_response" || pe.IsRetryable() {
				t.Errorf("provider error %+v: %q", pe, err)
			}
		},
	},
	{
		name:  "no content in a stream is a clear, non-retryable error",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Reply{Empty: true})},
		req: func(provider) *llm.Request {
			r := simple("q")
			r.Stream = true
			return r
		},
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			if pe.StatusCode != 200 || pe.Type != "invalid_response" || pe.IsRetryable() {
				t.Errorf("provider error %+v: %q", pe, err)
			}
		},
	},
	{
		name:  "API key goes in the provider's header",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Text("ok"))},
		req:   func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			mustOK(t, resp, err)
			h := onlyRequest(t, s).Header
			switch p.protocol {
			case llmtest.Anthropic:
				if h.Get("x-api-key") != testKey || h.Get("Authorization") != "" || h.Get("anthropic-version") == "" {
					t.Errorf("headers %v", h)
				}
			case llmtest.OpenAI:
				if h.Get("Authorization") != "Bearer "+testKey || h.Get("x-api-key") != "" {
					t.Errorf("headers %v", h)
				}
			}
		},
	},
	{
		name: "API key never appears in an error",
		rules: []llmtest.Rule{llmtest.Always(llmtest.Fail(401, "authentication_error",
			"Incorrect API key provided: "+testKey))},
		req: func(provider) *llm.Request { return simple("q") },
		verify: func(t *testing.T, p provider, resp *llm.Response, err error, s *llmtest.Server) {
			pe := providerError(t, err)
			for e := error(pe); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), testKey) {
					t.Errorf("key leaked in %T: %q", e, e.Error())
				}
			}
			if pe.StatusCode != 401 || pe.IsRetryable() {
				t.Errorf("provider error %+v", pe)
			}
		},
	},
}

func TestConformance(t *testing.T) {
	for _, p := range providers {
		for _, c := range checks {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, c.rules...)
				resp, err := newModel(t, p, s).Generate(context.Background(), c.req(p))
				c.verify(t, p, resp, err, s)
			})
		}
	}
}
