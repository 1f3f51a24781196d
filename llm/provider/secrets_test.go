package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/provider"
)

const (
	pathToken  = "t0k3n-abcdef0123456789"
	queryToken = "QSECRET-0123456789abcdef"
)

func ask(sel *provider.Selection, text string) (*llm.Response, error) {
	return sel.LLM.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}, MaxTokens: 32})
}

// countingTransport proves the caller's client is still the one used.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestResolveCarriesTheQueryString(t *testing.T) {
	for _, p := range []string{"anthropic", "openai"} {
		t.Run(p, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Echo("echo: "))
			gw := llmtest.NewGateway(t, s, "")
			env := map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": gw.URL() + "/?key=" + queryToken + "&api-version=2024-02-01"}
			if p == "openai" {
				env = map[string]string{"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": gw.URL() + "/v1?key=" + queryToken + "&api-version=2024-02-01"}
			}
			ct := &countingTransport{}
			sel, err := provider.Resolve(context.Background(), provider.Options{HTTPClient: &http.Client{Transport: ct}}, envFrom(env))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ask(sel, "hello"); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			seen := gw.Seen()
			if len(seen) != 1 {
				t.Fatalf("gateway saw %d requests", len(seen))
			}
			if q := seen[0].RawQuery; !strings.Contains(q, "key="+queryToken) || !strings.Contains(q, "api-version=2024-02-01") {
				t.Errorf("request reached %s with query %q; the base URL's query string was dropped", seen[0].Path, q)
			}
			if ct.n.Load() != 1 {
				t.Errorf("the caller's HTTP client made %d requests, want 1", ct.n.Load())
			}
			if strings.Contains(sel.String(), queryToken) || !strings.Contains(sel.BaseURL, "key=[redacted]") {
				t.Errorf("selection %s / base URL %q", sel, sel.BaseURL)
			}
		})
	}
}

func TestSelectionMasksThePathToken(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Echo("echo: "))
	gw := llmtest.NewGateway(t, s, "/"+pathToken)
	sel, err := provider.Resolve(context.Background(), provider.Options{},
		envFrom(map[string]string{"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": gw.URL() + "/" + pathToken + "/v1"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := gw.URL() + "/[redacted]/v1"; sel.BaseURL != want {
		t.Errorf("BaseURL = %q, want %q", sel.BaseURL, want)
	}
	for _, form := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(form, sel); strings.Contains(out, pathToken) || strings.Contains(out, secret) {
			t.Errorf("%s of the selection shows a secret: %s", form, out)
		}
	}
	resp, err := ask(sel, "through the gateway")
	if err != nil || resp.Text != "echo: through the gateway" {
		t.Fatalf("Generate: %v, %+v", err, resp)
	}
}

// TestSelectionLLMMasksErrors: the gateway answers with errors that quote
// every secret; the client Resolve returns hands them on masked, with what
// the retry policy decides on intact.
func TestSelectionLLMMasksErrors(t *testing.T) {
	for _, p := range []string{"anthropic", "openai"} {
		t.Run(p, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Echo("echo: "))
			gw := llmtest.NewGateway(t, s, "/"+pathToken)
			gw.Intercept(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				switch {
				case strings.Contains(string(body), "reset"):
					return llmtest.ResetConnection(w)
				case strings.Contains(string(body), "limit"):
					key := r.Header.Get("x-api-key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("retry-after", "2")
					w.WriteHeader(http.StatusTooManyRequests)
					msg := fmt.Sprintf("key %s over its limit at %s", key, r.URL.RequestURI())
					_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "rate_limit_error", "message": msg}})
					return true
				}
				return false
			})
			root := gw.URL() + "/" + pathToken
			env := map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": root + "?key=" + queryToken}
			if p == "openai" {
				env = map[string]string{"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": root + "/v1?key=" + queryToken}
			}
			sel, err := provider.Resolve(context.Background(), provider.Options{}, envFrom(env))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ask(sel, "limit")
			var pe *llm.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *llm.ProviderError", err)
			}
			if pe.StatusCode != 429 || pe.Type != "rate_limit_error" || pe.RetryAfter != 2*time.Second || !pe.IsRetryable() {
				t.Errorf("masked error lost what retries need: %+v", pe)
			}
			if !strings.Contains(pe.Message, "over its limit") {
				t.Errorf("message %q lost its meaning", pe.Message)
			}
			_, rerr := ask(sel, "reset")
			if !errors.As(rerr, &pe) || pe.StatusCode != 0 || !pe.IsRetryable() {
				t.Errorf("reset connection gave %v, want a retryable transport error", rerr)
			}
			for _, e := range []error{err, rerr, errors.Unwrap(pe)} {
				if e == nil {
					continue
				}
				for _, sec := range []string{secret, pathToken, queryToken} {
					if strings.Contains(e.Error(), sec) {
						t.Errorf("error shows %q: %v", sec, e)
					}
				}
			}
			t.Logf("masked: %v | %v", err, rerr)
		})
	}
}

func TestResolveErrorsMaskURLSecrets(t *testing.T) {
	const key = "sk-ant-SECRET-98765"
	cases := []struct {
		name   string
		opts   provider.Options
		env    map[string]string
		hidden []string
		want   string
	}{
		{"userinfo and a bad port", provider.Options{}, map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": "https://user:" + key + "@host:99999x/"}, []string{key}, "host:99999x"},
		{"bad scheme with a path token", provider.Options{}, map[string]string{"OPENAI_BASE_URL": "ftp://gw.example/" + pathToken + "/v1"}, []string{pathToken}, "gw.example"},
		{"bad port with a query token", provider.Options{BaseURL: "http://gw.example:0x/v1?key=" + queryToken}, nil, []string{queryToken}, "key=[redacted]"},
		{"OLLAMA_HOST with a query string", provider.Options{Provider: "ollama"}, map[string]string{"OLLAMA_HOST": "http://127.0.0.1:1?key=" + queryToken}, []string{queryToken}, "query string"},
		{"OLLAMA_HOST path token, no server", provider.Options{}, map[string]string{"OLLAMA_HOST": "http://127.0.0.1:1/" + pathToken}, []string{pathToken}, "127.0.0.1:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := provider.Resolve(context.Background(), tc.opts, envFrom(tc.env))
			if err == nil {
				t.Fatalf("Resolve chose %v, want an error", sel)
			}
			msg := err.Error()
			for _, h := range tc.hidden {
				if strings.Contains(msg, h) {
					t.Errorf("error shows %q: %s", h, msg)
				}
			}
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line mentioning %q", msg, tc.want)
			}
		})
	}
}
