package llmtest_test

// The conformance suite's cases that drive a provider beyond one request and
// one answer: cancellation, a broken transport, the model asked for, a
// refused request, the environment, concurrency and a tokens-per-minute
// limit. Each runs against every provider, as the table in
// conformance_test.go does.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

func TestConformanceCancellationDuringDelay(t *testing.T) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Minute, "too late")))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s.OnRequest(func(llmtest.RecordedRequest) { time.AfterFunc(20*time.Millisecond, cancel) })
				req := simple("q")
				req.Stream = stream
				start := time.Now()
				_, err := newModel(t, p, s).Generate(ctx, req)
				if d := time.Since(start); d > 30*time.Second { // a hang, against the minute's delay
					t.Errorf("returned after %v", d)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v does not satisfy errors.Is(context.Canceled)", err)
				}
				var pe *llm.ProviderError
				if errors.As(err, &pe) {
					t.Errorf("cancellation reported as a provider error %+v, which the retry policy would retry", pe)
				}
			})
		}
	}
}

func TestConformanceTransportFailure(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.New()
			m := newModel(t, p, s)
			s.Close() // nothing listens any more
			_, err := m.Generate(context.Background(), simple("q"))
			pe := providerError(t, err)
			if pe.StatusCode != 0 || !pe.IsRetryable() {
				t.Errorf("provider error %+v", pe)
			}
		})
	}
}

func TestConformanceModelChoice(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			m := newModel(t, p, s)
			req := simple("q")
			req.Model = "override-model"
			resp, err := m.Generate(context.Background(), req)
			mustOK(t, resp, err)
			if got := s.Requests()[0].Model; got != "override-model" || resp.Model != "override-model" {
				t.Errorf("request model %q, response model %q", got, resp.Model)
			}
			bare, err := p.new(s, config{key: testKey})
			if err != nil {
				t.Fatal(err)
			}
			_, err = bare.Generate(context.Background(), simple("q"))
			if err == nil || !strings.Contains(err.Error(), "no model") {
				t.Errorf("no model: error %v", err)
			}
			if s.Count() != 1 {
				t.Errorf("a request without a model reached the server")
			}
		})
	}
}

func TestConformanceBadRequest(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			m := newModel(t, p, s)
			_, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: "system", Content: "x"}}})
			if err == nil || !strings.Contains(err.Error(), `unknown role "system"`) {
				t.Errorf("error %v", err)
			}
			if _, err := m.Generate(context.Background(), nil); err == nil {
				t.Error("nil request accepted")
			}
			if s.Count() != 0 {
				t.Errorf("invalid requests reached the server")
			}
		})
	}
}

// The environment must not override explicit configuration: baton resolves
// the environment itself, in one place.
func TestConformanceIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-anthropic-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-anthropic-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("OPENAI_API_KEY", "env-openai-key")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("OPENAI_ORG_ID", "env-org")
	for _, p := range providers {
		for _, key := range []string{testKey, ""} {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			m, err := p.new(s, config{key: key, model: p.model})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Generate(context.Background(), simple("q")); err != nil {
				t.Fatalf("%s key %q: %v", p.name, key, err)
			}
			r := onlyRequest(t, s)
			if r.APIKey() != key || r.Header.Get("OpenAI-Organization") != "" {
				t.Errorf("%s with key %q: server saw key %q, headers %v", p.name, key, r.APIKey(), r.Header)
			}
		}
	}
}

func TestConformanceConcurrent(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Echo("re: "))
			m := newModel(t, p, s)
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			var mu sync.Mutex
			total := llm.Usage{}
			for i := 0; i < 16; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := simple(strings.Repeat("chunk ", i+1))
					req.Stream = i%2 == 0
					resp, err := m.Generate(context.Background(), req)
					if err != nil {
						errs <- err
						return
					}
					if resp.Text != "re: "+req.Messages[0].Content {
						errs <- errors.New("wrong echo: " + resp.Text)
					}
					mu.Lock()
					total = total.Add(resp.Usage)
					mu.Unlock()
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if s.Count() != 16 || total != s.TotalUsage() {
				t.Errorf("count %d, summed usage %+v, server total %+v", s.Count(), total, s.TotalUsage())
			}
		})
	}
}

// Rate limiting by the server is seen by clients as an ordinary 429.
func TestConformanceTokensPerMinute(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			req := simple("q")
			s.SetTokensPerMinute(int(computedUsage(req, "").InputTokens))
			m := newModel(t, p, s)
			if _, err := m.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			_, err := m.Generate(context.Background(), req)
			pe := providerError(t, err)
			if pe.StatusCode != http.StatusTooManyRequests || pe.RetryAfter < 59*time.Second || !pe.IsRetryable() {
				t.Errorf("provider error %+v", pe)
			}
		})
	}
}
