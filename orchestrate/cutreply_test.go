package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// cutSubagents answers as script does, but a sub-agent's finding needs
// more than need tokens of reply: below that it stops half written, with
// the provider's word for a cut.
func cutSubagents(word string, need int) llmtest.Rule {
	base := script(llmtest.Text(planJSON))
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		rep := base.Respond(r)
		if !isPlanner(r) && !isSynthesis(r) && r.MaxTokens < need {
			rep = llmtest.Reply{Text: rep.Text[:len(rep.Text)/2], StopReason: word}
		}
		return rep
	})
}

// A sub-agent's return cut at its max_tokens is only the start of a
// finding, and the synthesis would take it as whole: it is asked for again
// with a larger limit, booked as a call of its own, and a return that stays
// cut makes the run partial (exit 3 at the CLI), never ok.
func TestAskSubagentCutIsAskedAgainOrPartial(t *testing.T) {
	for name, mk := range providers {
		for _, need := range []int{orchestrate.DefaultSubagentTokens + 1, 1 << 30} {
			t.Run(fmt.Sprintf("%s/need %d", name, need), func(t *testing.T) {
				s := llmtest.NewServer(t, cutSubagents(cutWord[name], need))
				rec, err := orchestrate.Ask(context.Background(), config(mk(t, s)))
				first, again := 0, 0
				for _, r := range s.Requests() {
					switch {
					case isPlanner(r) || isSynthesis(r):
					case r.MaxTokens == orchestrate.DefaultSubagentTokens:
						first++
					case r.MaxTokens == 2*orchestrate.DefaultSubagentTokens:
						again++
					default:
						t.Errorf("a sub-agent request with max_tokens %d", r.MaxTokens)
					}
				}
				if first != 2 || again != 2 {
					t.Errorf("%d sub-agent requests, %d asked again; want 2 and 2", first, again)
				}
				calls := 0
				for _, c := range rec.Calls {
					if c.Phase == orchestrate.CallSubagent {
						calls++
					}
				}
				if calls != 4 {
					t.Errorf("the record holds %d sub-agent calls; want 4 (both asked twice)", calls)
				}
				if !hasWarning(rec, fmt.Sprintf("was cut at its %d-token limit (max_tokens)", orchestrate.DefaultSubagentTokens)) {
					t.Errorf("no warning names the cut return and its limit: %v", rec.Warnings)
				}
				if need == orchestrate.DefaultSubagentTokens+1 {
					if err != nil || rec.Status != orchestrate.RunOK {
						t.Errorf("Ask: %v, status %q; want ok once the returns came back whole", err, rec.Status)
					}
					for _, st := range rec.Subtasks[1:] {
						if !strings.HasPrefix(st.Output, "finding for ") || !strings.HasSuffix(st.Output, st.Task) {
							t.Errorf("subtask result %q; want the whole finding", st.Output)
						}
					}
					return
				}
				if !errors.Is(err, orchestrate.ErrPartial) || !errors.Is(err, orchestrate.ErrTruncated) || rec.Status != orchestrate.RunPartial {
					t.Errorf("Ask: %v, status %q; want a partial run with a cut reply", err, rec.Status)
				}
				if err != nil && !strings.Contains(err.Error(), "subtask 2") {
					t.Errorf("the error does not name the cut subtask: %v", err)
				}
			})
		}
	}
}

// cutPlan is a plan whose JSON closes before its limit was reached: a
// model that ran out of max_tokens after the first subtask and still wrote
// valid JSON. Used as it stands, the run would answer a third of the task.
const cutPlan = `{"subtasks": [
  {"task": "Who prepared the report?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "The finance team."}
]}`

// A planner reply cut at its max_tokens is not used as the plan because it
// happens to parse: it is asked for again with a larger limit, and the
// whole plan is used; a plan that stays cut makes the run partial.
func TestAskPlannerCutIsAskedAgainOrPartial(t *testing.T) {
	for name, mk := range providers {
		for _, need := range []int{orchestrate.DefaultPlannerTokens + 1, 1 << 30} {
			t.Run(fmt.Sprintf("%s/need %d", name, need), func(t *testing.T) {
				base := script(llmtest.Text(planJSON))
				s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
					if isPlanner(r) && r.MaxTokens < need {
						return llmtest.Reply{Text: cutPlan, StopReason: cutWord[name]}
					}
					return base.Respond(r)
				}))
				rec, err := orchestrate.Ask(context.Background(), config(mk(t, s)))
				var limits []int
				for _, r := range s.Requests() {
					if isPlanner(r) {
						limits = append(limits, r.MaxTokens)
					}
				}
				if want := []int{orchestrate.DefaultPlannerTokens, 2 * orchestrate.DefaultPlannerTokens}; fmt.Sprint(limits) != fmt.Sprint(want) {
					t.Errorf("planner requests with max_tokens %v; want %v", limits, want)
				}
				if rec.Usage.Planner.InputTokens == 0 || rec.Accounting.PlannerInputTokens == 0 {
					t.Errorf("the planner's calls are not booked: usage %+v", rec.Usage.Planner)
				}
				if need == orchestrate.DefaultPlannerTokens+1 {
					if err != nil || rec.Status != orchestrate.RunOK || len(rec.Subtasks) != 3 {
						t.Errorf("Ask: %v, status %q, %d subtasks; want ok with the whole plan's 3", err, rec.Status, len(rec.Subtasks))
					}
					return
				}
				if !errors.Is(err, orchestrate.ErrTruncated) || rec.Status != orchestrate.RunPartial {
					t.Errorf("Ask: %v, status %q; want a partial run with a cut plan", err, rec.Status)
				}
				if !hasWarning(rec, fmt.Sprintf("the plan was cut at its %d-token limit (max_tokens), and again at %d", orchestrate.DefaultPlannerTokens, 2*orchestrate.DefaultPlannerTokens)) {
					t.Errorf("no warning names the cut plan: %v", rec.Warnings)
				}
			})
		}
	}
}

// A map request's answer cut at its limit would lose the counts at its
// end: it is asked for again with a larger limit and counted as a map call
// of its own, so the joined count is still right.
func TestAskMapCutIsAskedAgain(t *testing.T) {
	const window, subMax = 4000, 600
	text, planted := corpus(140)
	base := counting()
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		rep := base.Respond(r)
		if !isPlanner(r) && !isSynthesis(r) && !isReduce(r) && r.MaxTokens <= subMax {
			rep.Text, rep.StopReason = "cou", "max_tokens"
		}
		return rep
	}))
	s.SetContextWindow(window)
	cfg := orchestrate.Config{
		Task: "How many times is " + marker + " mentioned in total?", Context: text, Sources: []string{"notes.md"},
		Model: providers["anthropic"](t, s), ModelName: "test-model", Window: window,
		SubagentMax: subMax, SynthesisMax: 600, PlannerMax: 600, Concurrency: 3,
	}
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil || rec.Answer != fmt.Sprintf("FINAL count: %d", planted) {
		t.Fatalf("Ask: %v, answer %q; want ok and the count %d (warnings %v)", err, rec.Answer, planted, rec.Warnings)
	}
	if over := overWindow(s); len(over) > 0 {
		t.Errorf("requests over the window were sent: %v", over)
	}
	st := rec.Subtasks[0]
	if st.Parts < 2 || st.MapCalls != 2*st.Parts {
		t.Errorf("%d parts answered by %d map calls; want every part asked twice", st.Parts, st.MapCalls)
	}
}
