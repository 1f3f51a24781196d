package orchestrate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// garbage answers every planner call with text that is no plan.
func garbage() llmtest.Rule {
	return script(llmtest.Text("I cannot do that."), llmtest.Text(`{"subtasks": [{"task": ""}]}`))
}

// A planner that fails after its repair round falls back to the retrieval
// planner by default: the run answers, with a warning, and the record keeps
// the paid planner usage and says why the retrieval planner ran.
func TestAskInvalidPlanFallsBackToRetrieval(t *testing.T) {
	s := llmtest.NewServer(t, garbage())
	rec, err := orchestrate.Ask(context.Background(), config(providers["anthropic"](t, s)))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if rec.Answer == "" {
		t.Error("no answer after the fallback")
	}
	if rec.Planner != orchestrate.PlannerRetrieval {
		t.Errorf("planner = %q, want retrieval", rec.Planner)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "retrieval planner") {
		t.Errorf("no fallback warning: %v", rec.Warnings)
	}
	if !rec.ModelCalled || rec.Usage.Planner.InputTokens == 0 || len(rec.PlannerOutputs) != 2 {
		t.Errorf("model_called %v, planner usage %+v, outputs %d: the paid planner calls are not in the record",
			rec.ModelCalled, rec.Usage.Planner, len(rec.PlannerOutputs))
	}
	if rec.Status != orchestrate.RunOK || !strings.Contains(rec.PlannerReason, "valid plan") {
		t.Errorf("status %q, planner_reason %q", rec.Status, rec.PlannerReason)
	}
}

// Asked for the LLM planner explicitly, the same failure ends the run, and
// the record says a model was called and what it cost.
func TestAskExplicitLLMPlannerFailureKeepsUsage(t *testing.T) {
	for _, mode := range []string{orchestrate.PlannerLLM, orchestrate.PlannerFull} {
		t.Run(mode, func(t *testing.T) {
			s := llmtest.NewServer(t, garbage())
			cfg := config(providers["openai"](t, s))
			cfg.Planner = mode
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if !errors.Is(err, orchestrate.ErrPlan) {
				t.Fatalf("err = %v, want ErrPlan", err)
			}
			if s.Count() != 2 {
				t.Errorf("server saw %d requests; want the 2 planner calls only", s.Count())
			}
			if !rec.ModelCalled || rec.Usage.Planner.InputTokens == 0 || rec.Usage.Total.InputTokens == 0 {
				t.Errorf("model_called %v, usage %+v; want true and the planner's usage", rec.ModelCalled, rec.Usage)
			}
			if rec.Status != orchestrate.RunFailed || rec.Error == "" {
				t.Errorf("status %q, error %q", rec.Status, rec.Error)
			}
		})
	}
}

// status tells a script what happened without parsing errors.
func TestAskRecordStatus(t *testing.T) {
	fail := llmtest.Always(llmtest.Fail(400, "invalid_request_error", "bad")).WhenContains("Your subtask: Summarise the cost picture")
	cases := []struct {
		name  string
		rules []llmtest.Rule
		dry   bool
		task  string
		want  string
	}{
		{"ok", []llmtest.Rule{script(llmtest.Text(planJSON))}, false, "", orchestrate.RunOK},
		{"partial", []llmtest.Rule{fail, script(llmtest.Text(planJSON))}, false, "", orchestrate.RunPartial},
		{"dry run", nil, true, "", orchestrate.RunDryRun},
		{"failed", nil, false, " ", orchestrate.RunFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, tc.rules...)
			cfg := config(providers["anthropic"](t, s))
			cfg.DryRun = tc.dry
			if tc.task != "" {
				cfg.Task = tc.task
			}
			// A clock that moves 1 ms each time it is read: every phase
			// that ran has a duration above zero.
			var mu sync.Mutex
			now := time.Unix(1_700_000_000, 0)
			cfg.Now = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(time.Millisecond)
				return now
			}
			rec, _ := orchestrate.Ask(context.Background(), cfg)
			if rec.Status != tc.want {
				t.Errorf("status = %q, want %q", rec.Status, tc.want)
			}
			if tc.want == orchestrate.RunOK || tc.want == orchestrate.RunPartial {
				d := rec.PhaseDurationMS
				if d.Plan <= 0 || d.Assemble <= 0 || d.Dispatch <= 0 || d.Synthesis <= 0 {
					t.Errorf("phase durations = %+v; want every phase timed", d)
				}
				if !rec.ModelCalled {
					t.Error("model_called is false")
				}
			}
			if tc.want == orchestrate.RunDryRun && (rec.ModelCalled || s.Count() != 0) {
				t.Errorf("dry run called a model")
			}
		})
	}
}

// The repair round is checked like any request: when the planner's long
// invalid answer makes the repair request too big for the window, it is not
// sent; auto falls back, an explicit LLM planner fails with ErrWindow.
func TestAskRepairOverTheWindowIsNotSent(t *testing.T) {
	long := "I cannot plan this. " + strings.Repeat("rambling ", 3000)
	// Learn the first planner request's size from the fake, which counts
	// with the same encoding, then give a window it fits with little room.
	probe := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	if _, err := orchestrate.Ask(context.Background(), config(providers["openai"](t, probe))); err != nil {
		t.Fatal(err)
	}
	first := int(probe.Requests()[0].Usage.InputTokens)
	window := first + first/10 + 1 + orchestrate.DefaultPlannerTokens + 200

	for _, mode := range []string{orchestrate.PlannerAuto, orchestrate.PlannerLLM} {
		t.Run(mode, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(long), llmtest.Text(planJSON)))
			cfg := config(providers["openai"](t, s))
			cfg.Planner, cfg.Window = mode, window
			rec, err := orchestrate.Ask(context.Background(), cfg)
			planners := 0
			for _, r := range s.Requests() {
				if isPlanner(r) {
					planners++
				}
			}
			if planners != 1 {
				t.Errorf("planner requests = %d, want 1: the repair is over the window", planners)
			}
			if mode == orchestrate.PlannerLLM {
				if !errors.Is(err, orchestrate.ErrWindow) || rec.Status != orchestrate.RunFailed {
					t.Errorf("err = %v, status %q; want ErrWindow, failed", err, rec.Status)
				}
				return
			}
			if err != nil || rec.Planner != orchestrate.PlannerRetrieval || !strings.Contains(rec.PlannerReason, "repair request would not fit") {
				t.Errorf("err %v, planner %q, reason %q", err, rec.Planner, rec.PlannerReason)
			}
		})
	}
}
