package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// progressScript: the analysis step reads a file and dispatches two
// sub-agents in its first turn, and finishes in its second; every other step
// finishes at once. The first turn reports a fixed usage so the context the
// second turn starts from is known.
func progressScript() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "You are a sub-agent") {
			if strings.Contains(r.Messages[0].Content, "second") && agentRounds(r) == 0 {
				return llmtest.CallTools(call("sr", "read_file", map[string]string{"path": "app/greet.py"}))
			}
			return llmtest.Text("found it at app/greet.py:3")
		}
		if strings.Contains(r.System, "# Analyse the request") && agentRounds(r) == 0 {
			reply := llmtest.CallTools(
				call("r1", "read_file", map[string]string{"path": "docs/requirements.md"}),
				call("d1", "dispatch_agents", map[string]any{"tasks": []any{
					map[string]string{"goal": "first: find the flag parsing"},
					map[string]string{"goal": "second: find the tests"},
				}}))
			reply.Usage = &llm.Usage{InputTokens: 5000, OutputTokens: 50}
			return reply
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
	})
}

// recorder collects events; the runner calls it from one goroutine, the
// lock is for the test's own read after Run.
type recorder struct {
	mu     sync.Mutex
	events []runner.ProgressEvent
}

func (r *recorder) observe(e runner.ProgressEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func describe(e runner.ProgressEvent) string {
	switch e.Kind {
	case runner.ProgressStepStart:
		return fmt.Sprintf("step %d %s %s", e.Step, e.Skill, e.Phase)
	case runner.ProgressTurnStart:
		return fmt.Sprintf("turn %d", e.Turn)
	case runner.ProgressToolStart:
		return fmt.Sprintf("tool %s %s", e.Tool, e.Detail)
	case runner.ProgressToolEnd:
		return fmt.Sprintf("tool end %s failed=%v", e.Tool, e.Failed)
	case runner.ProgressSubagentStart:
		return fmt.Sprintf("sub-agent start of %d", e.Agents)
	case runner.ProgressSubagentEnd:
		return fmt.Sprintf("sub-agent end of %d", e.Agents)
	case runner.ProgressStepEnd:
		return fmt.Sprintf("step end %d turns=%d next=%s err=%v", e.Step, e.Turns, e.Next, e.Err)
	case runner.ProgressReset:
		return "reset " + e.Reason
	}
	return fmt.Sprintf("kind %d", e.Kind)
}

func TestProgressEventsOfAStep(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t)
			s := llmtest.NewServer(t, progressScript())
			var rec recorder
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: mk(t, s), ModelName: "m", Progress: rec.observe})
			if err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			events := append([]runner.ProgressEvent(nil), rec.events...)
			rec.mu.Unlock()

			var step1 []runner.ProgressEvent
			for _, e := range events {
				if e.Step == 1 {
					step1 = append(step1, e)
				}
			}
			var got []string
			for _, e := range step1 {
				got = append(got, describe(e))
			}
			// The sub-agents run in parallel: their four events may come in
			// any order between the dispatch's start and end, so they are
			// checked apart.
			want := []string{
				"step 1 analyse-request analysis",
				"turn 1",
				"tool read_file docs/requirements.md",
				"tool end read_file failed=false",
				"tool dispatch_agents 2 tasks",
				"SUBAGENTS",
				"tool end dispatch_agents failed=false",
				"turn 2",
				"tool finish ",
				"tool end finish failed=false",
				"step end 1 turns=2 next=plan-change err=<nil>",
			}
			var squashed []string
			open := map[int]bool{}
			starts, ends := 0, 0
			for i, d := range got {
				e := step1[i]
				switch e.Kind {
				case runner.ProgressSubagentStart:
					if open[e.Agent] {
						t.Errorf("sub-agent %d started twice", e.Agent)
					}
					open[e.Agent] = true
					starts++
				case runner.ProgressSubagentEnd:
					if !open[e.Agent] {
						t.Errorf("sub-agent %d ended before it started", e.Agent)
					}
					delete(open, e.Agent)
					ends++
				default:
					squashed = append(squashed, d)
					continue
				}
				if len(squashed) == 0 || squashed[len(squashed)-1] != "SUBAGENTS" {
					squashed = append(squashed, "SUBAGENTS")
				}
			}
			if strings.Join(squashed, "\n") != strings.Join(want, "\n") {
				t.Errorf("step 1 events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if starts != 2 || ends != 2 {
				t.Errorf("sub-agent events: %d starts, %d ends; want 2 and 2", starts, ends)
			}

			// The budget's figures travel with every turn.
			for _, e := range step1 {
				if e.Kind != runner.ProgressTurnStart {
					continue
				}
				if e.ThresholdTokens != 130000 || e.WindowTokens != 200000 {
					t.Errorf("turn %d: threshold %d of window %d, want 130000 of 200000", e.Turn, e.ThresholdTokens, e.WindowTokens)
				}
				switch e.Turn {
				case 1:
					if e.ContextTokens <= 0 || e.ContextTokens >= 5000 {
						t.Errorf("turn 1 context %d: want the fresh context's size", e.ContextTokens)
					}
				case 2:
					// The provider measured 5000 after turn 1; the tool
					// results come on top.
					if e.ContextTokens <= 5000 || e.ContextTokens > 8000 {
						t.Errorf("turn 2 context %d: want 5000 plus the tool results", e.ContextTokens)
					}
				}
			}
			// The step's usage is what the provider reported for its
			// session and its sub-agents.
			var want1 llm.Usage
			for _, r := range s.Requests() {
				if strings.Contains(r.System, "# Analyse the request") || strings.Contains(r.System, "You are a sub-agent") {
					want1 = want1.Add(r.Usage)
				}
			}
			if end := step1[len(step1)-1]; end.Usage != want1 || end.Elapsed < 0 {
				t.Errorf("step end usage %+v, want %+v", end.Usage, want1)
			}
			// Every step of the run starts and ends, in order.
			var bounds []string
			for _, e := range events {
				if e.Kind == runner.ProgressStepStart || e.Kind == runner.ProgressStepEnd {
					bounds = append(bounds, fmt.Sprintf("%d:%d", e.Kind, e.Step))
				}
			}
			wantBounds := []string{}
			for i := 1; i <= res.Steps; i++ {
				wantBounds = append(wantBounds, fmt.Sprintf("%d:%d", runner.ProgressStepStart, i), fmt.Sprintf("%d:%d", runner.ProgressStepEnd, i))
			}
			if strings.Join(bounds, " ") != strings.Join(wantBounds, " ") || res.Steps != 4 {
				t.Errorf("step bounds %v, want %v (steps %d)", bounds, wantBounds, res.Steps)
			}
		})
	}
}

// A failed step ends with its error.
func TestProgressStepEndCarriesTheFailure(t *testing.T) {
	dir := copyExample(t)
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Fail(400, "invalid_request_error", "bad request")))
	var rec recorder
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m", Progress: rec.observe})
	if err == nil {
		t.Fatal("the run succeeded against a failing provider")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	last := rec.events[len(rec.events)-1]
	if last.Kind != runner.ProgressStepEnd || last.Err == nil || last.Turns != 1 {
		t.Errorf("last event %s, want the step's end with its error after one turn", describe(last))
	}
}

// An observer that panics, or never returns, does not break or stall the
// run: the run finishes, and says the display failed.
func TestProgressObserverCannotBreakTheRun(t *testing.T) {
	t.Run("panics", func(t *testing.T) {
		dir := copyExample(t)
		s := llmtest.NewServer(t, progressScript())
		calls := 0
		res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m",
			Progress: func(e runner.ProgressEvent) {
				calls++
				if e.Kind == runner.ProgressToolStart {
					panic("observer bug")
				}
			}})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.Steps != 4 || res.Summary != "step done" {
			t.Errorf("steps %d, summary %q", res.Steps, res.Summary)
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), "progress display failed and was turned off (a bug in baton): observer bug") {
			t.Errorf("warnings %q lack the observer's failure", res.Warnings)
		}
		if calls != 3 {
			t.Errorf("the observer was called %d times, want 3 (step start, turn start, then the panic and no more)", calls)
		}
	})
	t.Run("blocks", func(t *testing.T) {
		dir := copyExample(t)
		s := llmtest.NewServer(t, progressScript())
		release := make(chan struct{})
		defer close(release)
		done := make(chan error, 1)
		var res *runner.Result
		go func() {
			var err error
			res, err = runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m",
				Progress: func(runner.ProgressEvent) { <-release }})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("a blocked observer stalled the run")
		}
		if res.Steps != 4 || !strings.Contains(strings.Join(res.Warnings, "\n"), "progress display: still busy") {
			t.Errorf("steps %d, warnings %q", res.Steps, res.Warnings)
		}
	})
}

// An external agent's step reports the process it started, and its end.
func TestProgressOfAnAgentCmdStep(t *testing.T) {
	dir, logDir := copyExample(t), t.TempDir()
	var rec recorder
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir), Progress: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, e := range rec.events {
		got = append(got, fmt.Sprintf("%d:%d", e.Step, e.Kind))
	}
	var want []string
	for i := 1; i <= res.Steps; i++ {
		want = append(want, fmt.Sprintf("%d:%d", i, runner.ProgressStepStart), fmt.Sprintf("%d:%d", i, runner.ProgressAgentStart), fmt.Sprintf("%d:%d", i, runner.ProgressStepEnd))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || res.Steps != 4 {
		t.Errorf("events %v, want %v", got, want)
	}
}

// A reset mid-step is reported, and the next turn starts from the fresh
// session's size, not the old session's.
func TestProgressReportsAResetMidStep(t *testing.T) {
	dir := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	var rec recorder
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m", Progress: rec.observe}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, e := range rec.events {
		if e.Kind != runner.ProgressReset {
			continue
		}
		if i == 0 || rec.events[i-1].Kind != runner.ProgressThreshold || rec.events[i-1].ContextTokens != e.ContextTokens {
			t.Errorf("the reset does not follow the threshold crossing that caused it: %s before it", describe(rec.events[max(i-1, 0)]))
		}
		if e.Step != 1 || e.Reason != "threshold" || e.ContextTokens < 150_000 || e.ThresholdTokens != 130000 {
			t.Fatalf("reset event %+v", e)
		}
		for _, n := range rec.events[i+1:] {
			if n.Kind == runner.ProgressTurnStart {
				if n.ContextTokens <= 0 || n.ContextTokens > 10_000 {
					t.Errorf("the turn after the reset starts at %d context tokens, want the fresh session's size", n.ContextTokens)
				}
				return
			}
		}
		t.Fatal("no turn after the reset")
	}
	t.Fatal("no reset event")
}
