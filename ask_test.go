package baton_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const exampleDoc = "examples/incident-report.md"

// plan is what a planner might answer over the example incident report:
// one lookup answered inline and two analyses pointing at sections.
const plan = `{"subtasks": [
 {"task": "How long did the outage last?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "3 h 42 min"},
 {"task": "Explain the retry storm", "skill": "causal_reasoning", "context_pointers": {"sections": ["Retry storm"], "line_ranges": []}},
 {"task": "List the action items", "skill": "fact-extraction", "context_pointers": {"sections": ["Action Items"], "line_ranges": []}}
], "reasoning": "one lookup, two analyses"}`

// script plays the planner, the sub-agents and the synthesis.
func script() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(plan)
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text("The outage lasted 3 h 42 min; a retry storm exhausted the pool.")
		default:
			return llmtest.Text("finding")
		}
	})
}

// env is an environment with only what a test gives, so that the
// machine's keys and a local Ollama play no part.
func env(vars map[string]string) func(string) string {
	return func(k string) string {
		if k == "OLLAMA_HOST" && vars[k] == "" {
			return "127.0.0.1:1"
		}
		return vars[k]
	}
}

func newAnthropic(t *testing.T, srv *llmtest.Server) llm.Model {
	t.Helper()
	p, err := anthropic.New(anthropic.Config{BaseURL: srv.AnthropicBaseURL(), APIKey: "test", Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// One 429 on a sub-agent's call: the provider client alone does not retry
// (its SDK's retries are off, as baton's policy replaces them), so a run
// on it is partial; Ask wraps the same client in the policy and the run
// is ok, whether the client is the caller's or the environment's.
func TestAskRetriesRateLimitByDefault(t *testing.T) {
	newServer := func() *llmtest.Server {
		return llmtest.NewServer(t,
			llmtest.Sequence(llmtest.RateLimit(10*time.Millisecond)).WhenContains("Your subtask: Explain the retry storm").Limit(1),
			script())
	}
	req := baton.AskRequest{Task: "What caused the outage?", Documents: []string{exampleDoc}, Planner: "full", Model: "claude-sonnet-4-5", NoSave: true}

	bare := newServer()
	cfg := orchestrate.Config{Task: req.Task, Context: readFile(t, exampleDoc), Planner: "full",
		Model: newAnthropic(t, bare), Provider: "anthropic", ModelName: "claude-sonnet-4-5"}
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if !errors.Is(err, orchestrate.ErrPartial) || rec.Status != "partial" {
		t.Fatalf("the bare client: status %q, err %v; want partial (the fake's 429 not retried)", rec.Status, err)
	}

	for _, tc := range []struct {
		name string
		opts func(srv *llmtest.Server) []baton.Option
	}{
		{"client", func(srv *llmtest.Server) []baton.Option {
			return []baton.Option{baton.WithClient(newAnthropic(t, srv), "anthropic"), baton.WithEnv(env(nil))}
		}},
		{"environment", func(srv *llmtest.Server) []baton.Option {
			return []baton.Option{baton.WithEnv(env(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()}))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer()
			res, err := baton.Ask(context.Background(), req, tc.opts(srv)...)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if res.Record.Status != "ok" || res.Record.Provider != "anthropic" {
				t.Fatalf("status %q provider %q, want ok from anthropic; warnings %q", res.Record.Status, res.Record.Provider, res.Record.Warnings)
			}
			limited := 0
			for _, r := range srv.Requests() {
				if strings.Contains(r.Messages[len(r.Messages)-1].Content, "Your subtask: Explain the retry storm") {
					limited++
				}
			}
			if limited != 2 {
				t.Errorf("the rate-limited subtask was sent %d times, want 2 (the 429, then the retry)", limited)
			}
		})
	}
}

// A library caller asks for temperature 0 and the wire carries 0; without
// a choice the sub-agents and the synthesis keep baton's default.
func TestAskTemperatureReachesTheWire(t *testing.T) {
	for _, tc := range []struct {
		name string
		temp *float64
		want float64
	}{
		{"zero", llm.Float(0), 0},
		{"default", nil, orchestrate.DefaultTemperature},
		{"chosen", llm.Float(0.7), 0.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, script())
			_, err := baton.Ask(context.Background(), baton.AskRequest{Task: "What caused the outage?", Documents: []string{exampleDoc},
				Planner: "full", Temperature: tc.temp, NoSave: true},
				baton.WithClient(newAnthropic(t, srv), "anthropic"), baton.WithEnv(env(nil)))
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			checked := 0
			for _, r := range srv.Requests() {
				if strings.Contains(r.System, "You are the planner") {
					continue // the planner always plans at 0
				}
				checked++
				if r.Temperature == nil || *r.Temperature != tc.want {
					t.Errorf("a %q request went with temperature %v, want %v", firstLine(r.System), deref(r.Temperature), tc.want)
				}
			}
			if checked < 3 {
				t.Fatalf("%d sub-agent and synthesis requests, want 3", checked)
			}
		})
	}
}

func deref(f *float64) any {
	if f == nil {
		return "none"
	}
	return *f
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The request with nothing but a task and a document (and no record
// written): the first call meets a 429 and the run is still ok.
func TestAskDefaultRequestRetriesRateLimit(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(0)).Limit(1), llmtest.Always(llmtest.Text("A retry storm.")))
	res, err := baton.Ask(context.Background(), baton.AskRequest{Task: "What caused the outage?", Documents: []string{exampleDoc}, NoSave: true},
		baton.WithEnv(env(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()})))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if res.Record.Status != "ok" || res.Record.Answer != "A retry storm." || srv.Count() != 2 {
		t.Fatalf("status %q, answer %q, %d requests; want ok, the answer, and 2 requests (the 429 and its retry)", res.Record.Status, res.Record.Answer, srv.Count())
	}
}
