package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// smallWindow is the window of "gpt-4" in tokens.Window: a known model whose
// window a test document can exceed cheaply.
const smallWindow = 8192

// bigDoc is a report of n sections of about words words each, every one with
// a marker, so the whole is far over smallWindow while any one section fits.
func bigDoc(n, words int) string {
	var b strings.Builder
	b.WriteString("# Annual report\n\n")
	for i := range n {
		fmt.Fprintf(&b, "## Part %d\n\nmarker-%d ", i+1, i+1)
		for j := range words {
			fmt.Fprintf(&b, "w%d ", (i*words+j)%997)
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// overWindow lists the requests the fake refused as over its window.
func overWindow(s *llmtest.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Status == 400 {
			out = append(out, fmt.Sprintf("%s (%.60q)", r.Path, r.System))
		}
	}
	return out
}

func windowConfig(m llm.Model, context string) orchestrate.Config {
	return orchestrate.Config{
		Task:      "What does part 2 say?",
		Context:   context,
		Sources:   []string{"annual.md"},
		Model:     m,
		ModelName: "gpt-4",
		Counter:   tokens.Default(),
	}
}

// The 1.5M-token document against a 200k window, scaled down: the
// full planner request would not fit, so it is never sent; auto plans from
// the outline instead, whose request fits; nothing the fake sees is over
// its window.
func TestAskNeverSendsAPlannerRequestOverTheWindow(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(partPlan)))
			s.SetContextWindow(smallWindow)
			text := bigDoc(12, 1500)
			if n := tokens.Count(text); n < 2*smallWindow {
				t.Fatalf("test document is only %d tokens", n)
			}
			rec, err := orchestrate.Ask(context.Background(), windowConfig(mk(t, s), text))
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if over := overWindow(s); len(over) > 0 {
				t.Errorf("requests over the window were sent: %v", over)
			}
			planners := 0
			for _, r := range s.Requests() {
				if isPlanner(r) {
					planners++
					if !strings.Contains(r.System, "outline") || strings.Contains(r.Messages[0].Content, "w996 w0 w1") {
						t.Errorf("the planner request is not the outline planner's, or holds the text")
					}
				}
			}
			if planners != 1 || rec.Planner != orchestrate.PlannerOutline {
				t.Errorf("planner = %q after %d planner requests, want outline after 1", rec.Planner, planners)
			}
			if !strings.Contains(rec.PlannerReason, "window") {
				t.Errorf("planner_reason does not name the window: %q", rec.PlannerReason)
			}
			if rec.Answer == "" {
				t.Error("no answer")
			}
		})
	}
}

// partPlan points at one part of bigDoc by its outline path.
const partPlan = `{"subtasks": [{"task": "What does part 2 say?", "skill": "summarization", "context_pointers": {"sections": ["Annual report > Part 2"], "line_ranges": []}, "answer": ""}], "reasoning": "one part"}`

// A provider's "prompt is too long" is not a refused JSON schema: the same
// request is never sent again. baton's own count says it fits (a --window
// larger than the server's), so only the provider can refuse it.
func TestAskPromptTooLongIsNotResent(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
			s.SetContextWindow(smallWindow)
			cfg := windowConfig(mk(t, s), bigDoc(12, 1500))
			cfg.ModelName = "unknown-model"
			cfg.Window = 1_000_000
			cfg.Planner = orchestrate.PlannerLLM
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if !errors.Is(err, llm.ErrPromptTooLong) {
				t.Fatalf("err = %v, want ErrPromptTooLong", err)
			}
			planners := 0
			for _, r := range s.Requests() {
				if isPlanner(r) {
					planners++
				}
			}
			if planners != 1 {
				t.Errorf("planner requests = %d, want 1 (never re-sent)", planners)
			}
			if w := strings.Join(rec.Warnings, "\n"); strings.Contains(w, "without one") {
				t.Errorf("a too-long prompt was taken for a refused schema: %v", rec.Warnings)
			}
			if !rec.ModelCalled || rec.Status != orchestrate.RunFailed {
				t.Errorf("model_called = %v, status = %q; want true, failed", rec.ModelCalled, rec.Status)
			}
		})
	}
}

// Under the default planner mode a provider's "too long" answer to the
// planner falls back to the retrieval planner instead of ending the run.
func TestAskAutoPlannerFallsBackWhenTheProviderSaysTooLong(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	// A context short enough for auto to pick the full planner, and a
	// server window shorter still.
	s.SetContextWindow(6000)
	cfg := windowConfig(providers["openai"](t, s), bigDoc(12, 50))
	cfg.ModelName = "unknown-model"
	cfg.Window = 1_000_000
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	planners := 0
	for _, r := range s.Requests() {
		if isPlanner(r) {
			planners++
		}
	}
	if planners != 1 || rec.Planner != orchestrate.PlannerRetrieval {
		t.Errorf("planner requests = %d, planner = %q; want 1 and retrieval", planners, rec.Planner)
	}
	if !strings.Contains(rec.PlannerReason, "too long") {
		t.Errorf("planner_reason = %q", rec.PlannerReason)
	}
}

// A synthesis that would not fit is not sent either: the run fails, and the
// record says a model was called.
func TestAskSynthesisOverTheWindowIsNotSent(t *testing.T) {
	long := strings.Repeat("finding detail ", 3000)
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case isPlanner(r):
			return llmtest.Text(planJSON)
		case isSynthesis(r):
			return llmtest.Text("FINAL")
		}
		return llmtest.Text(long)
	})
	s := llmtest.NewServer(t, rule)
	s.SetContextWindow(smallWindow)
	cfg := config(providers["openai"](t, s))
	cfg.ModelName = "gpt-4"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "window") {
		t.Fatalf("err = %v, want a synthesis window error", err)
	}
	for _, r := range s.Requests() {
		if isSynthesis(r) {
			t.Error("the over-window synthesis was sent")
		}
	}
	if !rec.ModelCalled || rec.Status != orchestrate.RunFailed {
		t.Errorf("model_called = %v, status = %q; want true, failed", rec.ModelCalled, rec.Status)
	}
}

// bigSection is a document with one small section and one far over
// smallWindow.
func bigSection() string {
	return "# Report\n\n## Small\n\nmarker-small facts.\n\n" + strings.TrimPrefix(bigDoc(1, 9000), "# Annual report\n\n")
}

// With --fail-fast a subtask that cannot fit the window, not even in
// map-reduce parts (the reply it must leave room for is nearly the whole
// window), ends the run before anything is sent to a sub-agent.
func TestAskFailFastOverTheWindowSendsNoSubagent(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := windowConfig(providers["openai"](t, s), bigSection())
	cfg.Task = "Summarise the small section and part 1." // a summary takes part 1 whole, however large
	cfg.Planner, cfg.FailFast = orchestrate.PlannerRetrieval, true
	cfg.SubagentMax = smallWindow - 50
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if !errors.Is(err, orchestrate.ErrWindow) {
		t.Fatalf("err = %v, want ErrWindow", err)
	}
	if s.Count() != 0 {
		t.Errorf("%d requests sent; want none", s.Count())
	}
	if rec.ModelCalled || rec.Status != orchestrate.RunFailed {
		t.Errorf("model_called %v, status %q; want false, failed", rec.ModelCalled, rec.Status)
	}
}
