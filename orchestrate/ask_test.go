package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// doc is a small report whose sections hold distinctive phrases, so a test
// can tell from a request which sections a sub-agent was sent.
const doc = `# Quarterly report

Prepared by the finance team.

## Revenue

Revenue rose to 12.4 million, marker-revenue, driven by the enterprise tier.

## Costs

Costs fell by 3 percent, marker-costs, after the data centre move.

### Staffing

Headcount stayed at 140, marker-staffing.

## Outlook

Next quarter looks flat, marker-outlook.
`

const planJSON = `Here is the plan:
` + "```json" + `
{"subtasks": [
  {"task": "Who prepared the report?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "The finance team."},
  {"task": "Explain what drove revenue", "skill": "causal_reasoning", "context_pointers": {"sections": ["2. revenue"], "line_ranges": []}},
  {"task": "Summarise the cost picture", "skill": "summarization", "context_pointers": {"sections": ["Costs"], "line_ranges": []}}
],
"reasoning": "one lookup, two analyses"}
` + "```"

func isPlanner(r llmtest.RecordedRequest) bool {
	return strings.Contains(r.System, "You are the planner")
}

func isSynthesis(r llmtest.RecordedRequest) bool {
	return strings.Contains(r.System, "You are the synthesis step")
}

// script answers planner, sub-agent and synthesis calls the way a model
// would: the plan above, a finding naming the subtask, and a final answer.
func script(planner ...llmtest.Reply) llmtest.Rule {
	n := 0
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case isPlanner(r):
			i := n
			n++
			if i >= len(planner) {
				i = len(planner) - 1
			}
			return planner[i]
		case isSynthesis(r):
			return llmtest.Text("FINAL: revenue up, costs down.")
		default:
			last := r.Messages[len(r.Messages)-1].Content
			return llmtest.Text("finding for " + subtaskOf(last))
		}
	})
}

func subtaskOf(user string) string {
	_, after, _ := strings.Cut(user, "Your subtask: ")
	line, _, _ := strings.Cut(after, "\n")
	return line
}

type newModel func(t *testing.T, s *llmtest.Server) llm.Model

var providers = map[string]newModel{
	"anthropic": func(t *testing.T, s *llmtest.Server) llm.Model {
		m, err := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: s.AnthropicBaseURL(), Model: "claude-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	},
	"openai": func(t *testing.T, s *llmtest.Server) llm.Model {
		m, err := openai.New(openai.Config{APIKey: "test-key", BaseURL: s.OpenAIBaseURL(), Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	},
}

func config(m llm.Model) orchestrate.Config {
	return orchestrate.Config{
		Task:      "Who prepared the report, what drove revenue, and how did costs develop?",
		Context:   doc,
		Sources:   []string{"report.md"},
		Model:     m,
		ModelName: "test-model",
		Counter:   tokens.Default(),
	}
}

func TestAskEndToEnd(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
			cfg := config(mk(t, s))
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if rec.Answer != "FINAL: revenue up, costs down." {
				t.Errorf("answer = %q", rec.Answer)
			}
			if got := s.Count(); got != 4 {
				t.Errorf("server saw %d requests, want 4 (planner, 2 sub-agents, synthesis)", got)
			}
			if len(rec.Subtasks) != 3 {
				t.Fatalf("subtasks = %d", len(rec.Subtasks))
			}
			self := rec.Subtasks[0]
			if self.Mode != orchestrate.ModeSelf || self.Output != "The finance team." || self.Status != orchestrate.StatusOK {
				t.Errorf("self subtask = %+v", self)
			}
			// Each sub-agent saw its own section and nothing else.
			want := map[string]struct{ in, out []string }{
				"Explain what drove revenue": {[]string{"marker-revenue"}, []string{"marker-costs", "marker-staffing", "marker-outlook", "finance team"}},
				"Summarise the cost picture": {[]string{"marker-costs", "marker-staffing"}, []string{"marker-revenue", "marker-outlook"}},
			}
			for _, r := range s.Requests() {
				if isPlanner(r) {
					if !strings.Contains(r.Messages[0].Content, "marker-outlook") {
						t.Error("the planner did not receive the whole document")
					}
					continue
				}
				if isSynthesis(r) {
					u := r.Messages[0].Content
					if !strings.Contains(u, "The finance team.") || !strings.Contains(u, "finding for Explain what drove revenue") {
						t.Errorf("synthesis prompt lacks results:\n%s", u)
					}
					if strings.Index(u, "The finance team.") > strings.Index(u, "finding for Explain what drove revenue") {
						t.Error("synthesis results are not in plan order")
					}
					continue
				}
				user := r.Messages[0].Content
				w, ok := want[subtaskOf(user)]
				if !ok {
					t.Errorf("unexpected sub-agent request for %q", subtaskOf(user))
					continue
				}
				for _, s := range w.in {
					if !strings.Contains(user, s) {
						t.Errorf("%q: slice lacks %s", subtaskOf(user), s)
					}
				}
				for _, s := range w.out {
					if strings.Contains(user, s) {
						t.Errorf("%q: slice holds %s, which belongs to another section", subtaskOf(user), s)
					}
				}
				if r.Temperature == nil || *r.Temperature != orchestrate.DefaultTemperature {
					t.Errorf("sub-agent temperature = %v", r.Temperature)
				}
				if r.System == "" || r.MaxTokens != orchestrate.DefaultSubagentTokens {
					t.Errorf("sub-agent system prompt empty or max tokens %d", r.MaxTokens)
				}
			}
			// Usage totals equal what the server reported.
			if got, want := rec.Usage.Total, s.TotalUsage(); got != want {
				t.Errorf("usage total = %+v, server reported %+v", got, want)
			}
			sum := rec.Usage.Planner.Add(rec.Usage.Subagents).Add(rec.Usage.Synthesis)
			if sum != rec.Usage.Total {
				t.Errorf("phases %+v do not add up to total %+v", sum, rec.Usage.Total)
			}
			checkAccounting(t, rec)
		})
	}
}

// checkAccounting verifies the naive baseline independently: it differs
// from what was sent only in the delegated prompts, each of which would
// have carried the whole context instead of its slice.
func checkAccounting(t *testing.T, rec *orchestrate.Record) {
	t.Helper()
	a := rec.Accounting
	c := tokens.Default()
	if a.ContextTokens != c.Count(doc) {
		t.Errorf("context tokens = %d, want %d", a.ContextTokens, c.Count(doc))
	}
	if a.OrchestratedInputTokens != a.PlannerInputTokens+a.SubagentInputTokens+a.SynthesisInputTokens {
		t.Errorf("orchestrated %d is not the sum of its phases", a.OrchestratedInputTokens)
	}
	diff := 0
	delegated := 0
	for _, s := range rec.Subtasks {
		if s.Mode == orchestrate.ModeDelegated {
			diff += a.ContextTokens - s.ContextTokens
			delegated++
		}
	}
	got := a.NaiveInputTokens - a.OrchestratedInputTokens
	// Token boundaries at the seams of a prompt may merge differently; allow
	// two tokens per delegated prompt.
	if got < diff-2*delegated || got > diff+2*delegated {
		t.Errorf("naive - orchestrated = %d, want about %d (sum of context minus slice)", got, diff)
	}
	if a.SavingsRatio <= 0 || a.SavingsRatio >= 1 {
		t.Errorf("savings ratio = %v", a.SavingsRatio)
	}
}

func TestAskRepairsAnInvalidPlanOnce(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(`{"subtasks": []}`), llmtest.Text(planJSON)))
	rec, err := orchestrate.Ask(context.Background(), config(providers["openai"](t, s)))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	planners := 0
	for _, r := range s.Requests() {
		if isPlanner(r) {
			planners++
			if planners == 2 {
				last := r.Messages[len(r.Messages)-1].Content
				if !strings.Contains(last, "no subtasks") && !strings.Contains(strings.ToLower(last), "subtask") {
					t.Errorf("repair request does not quote the validation error:\n%s", last)
				}
			}
		}
	}
	if planners != 2 || len(rec.PlannerOutputs) != 2 {
		t.Fatalf("planner calls = %d, outputs kept = %d; want 2 and 2", planners, len(rec.PlannerOutputs))
	}
}

func TestAskInvalidPlanAfterRepairFails(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text("I cannot do that."), llmtest.Text(`{"subtasks": [{"task": ""}]}`)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Planner = orchestrate.PlannerLLM // asked for by name: no fallback
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if !errors.Is(err, orchestrate.ErrPlan) {
		t.Fatalf("err = %v, want ErrPlan", err)
	}
	if s.Count() != 2 {
		t.Errorf("server saw %d requests; want exactly 2 planner calls and no sub-agent", s.Count())
	}
	if len(rec.PlannerOutputs) != 2 || rec.PlannerOutputs[0] != "I cannot do that." {
		t.Errorf("raw planner outputs not kept: %q", rec.PlannerOutputs)
	}
	if rec.Error == "" {
		t.Error("record does not carry the error")
	}
}

func TestAskPartialFailure(t *testing.T) {
	fail := llmtest.Always(llmtest.Fail(500, "api_error", "boom")).WhenContains("Your subtask: Summarise the cost picture")
	s := llmtest.NewServer(t, fail, script(llmtest.Text(planJSON)))
	m := llm.WithRetry(providers["anthropic"](t, s), llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	rec, err := orchestrate.Ask(context.Background(), config(m))
	if !errors.Is(err, orchestrate.ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	failed := rec.Subtasks[2]
	if failed.Status != orchestrate.StatusFailed || !strings.Contains(failed.Error, "500") {
		t.Errorf("failed subtask = %+v", failed)
	}
	if rec.Subtasks[1].Status != orchestrate.StatusOK {
		t.Errorf("the other subtask did not succeed: %+v", rec.Subtasks[1])
	}
	if rec.Answer == "" {
		t.Error("no answer from what succeeded")
	}
	var synth string
	for _, r := range s.Requests() {
		if isSynthesis(r) {
			synth = r.Messages[0].Content
		}
	}
	if !strings.Contains(synth, "FAILED") {
		t.Errorf("synthesis was not told what is missing:\n%s", synth)
	}
	attempts := 0
	for _, r := range s.Requests() {
		if strings.Contains(r.Messages[0].Content, "Your subtask: Summarise the cost picture") {
			attempts++
		}
	}
	if attempts != 2 {
		t.Errorf("failing subtask was sent %d times, want 2 (the retry bound)", attempts)
	}
}

func TestAskFailFast(t *testing.T) {
	fail := llmtest.Always(llmtest.Fail(400, "invalid_request_error", "bad")).WhenContains("Your subtask: Summarise the cost picture")
	s := llmtest.NewServer(t, fail, script(llmtest.Text(planJSON)))
	cfg := config(providers["openai"](t, s))
	cfg.FailFast = true
	cfg.Concurrency = 1
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err == nil || errors.Is(err, orchestrate.ErrPartial) {
		t.Fatalf("err = %v, want a hard failure", err)
	}
	for _, r := range s.Requests() {
		if isSynthesis(r) {
			t.Fatal("synthesis ran despite --fail-fast")
		}
	}
	if rec.Answer != "" {
		t.Errorf("answer = %q, want none", rec.Answer)
	}
}

func TestAskUnknownSkillAndUnmatchedPointer(t *testing.T) {
	p := `{"subtasks": [{"task": "Rate the outlook", "skill": "astrology", "context_pointers": {"sections": ["Outlook"]}},
	{"task": "Check the appendix", "skill": "fact_extraction", "context_pointers": {"sections": ["Appendix Z"]}}], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(p)))
	rec, err := orchestrate.Ask(context.Background(), config(providers["anthropic"](t, s)))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	w := strings.Join(rec.Warnings, "\n")
	if !strings.Contains(w, `unknown skill "astrology"`) {
		t.Errorf("no warning for the unknown skill:\n%s", w)
	}
	if rec.Subtasks[0].ResolvedSkill == "astrology" || rec.Subtasks[0].Status != orchestrate.StatusOK {
		t.Errorf("unknown skill subtask = %+v", rec.Subtasks[0])
	}
	fb := rec.Subtasks[1]
	if fb.Slice == nil || !fb.Slice.Fallback || fb.ContextTokens != rec.Accounting.ContextTokens {
		t.Errorf("unmatched pointer did not fall back to the full context: %+v", fb.Slice)
	}
	if !strings.Contains(w, "subtask 2") {
		t.Errorf("the fallback is not reported:\n%s", w)
	}
}

func TestAskDryRunCallsNoModel(t *testing.T) {
	cfg := config(nil)
	cfg.Task = "What drove revenue? How did staffing change?"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if !rec.DryRun || rec.ModelCalled || rec.Planner != orchestrate.PlannerRetrieval {
		t.Errorf("record flags: dry=%v called=%v planner=%s", rec.DryRun, rec.ModelCalled, rec.Planner)
	}
	if len(rec.Subtasks) == 0 || rec.Subtasks[0].Slice == nil {
		t.Fatalf("no sliced subtasks: %+v", rec.Subtasks)
	}
	if got := rec.Subtasks[0].Slice.Matched; len(got) == 0 || got[0].Heading != "Revenue" {
		t.Errorf("first subtask slice = %+v, want the Revenue section", got)
	}
	a := rec.Accounting
	if !a.Estimate || a.PlannerInputTokens == 0 || a.NaiveInputTokens <= a.OrchestratedInputTokens {
		t.Errorf("estimate = %+v", a)
	}
	if rec.Usage.Total != (llm.Usage{}) {
		t.Errorf("a dry run reports provider usage %+v", rec.Usage.Total)
	}
}

func TestAskCancelledReturnsPromptly(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Minute, "late")))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	rec, err := orchestrate.Ask(ctx, config(providers["openai"](t, s)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}
	if rec == nil || rec.Error == "" {
		t.Fatal("no record of the cancelled run")
	}
}

func TestAskConcurrencyBound(t *testing.T) {
	var subtasks []string
	for i := 0; i < 6; i++ {
		subtasks = append(subtasks, fmt.Sprintf(`{"task": "part %d", "skill": "summarization", "context_pointers": {"sections": ["Outlook"]}}`, i))
	}
	p := `{"subtasks": [` + strings.Join(subtasks, ",") + `], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(p)))
	s.SetLatency(30 * time.Millisecond)
	var mu sync.Mutex
	inflight, peak := 0, 0
	cfg := config(providers["anthropic"](t, s))
	cfg.Concurrency = 2
	cfg.Progress = func(e orchestrate.Event) {
		if e.Phase != "dispatch" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch e.Status {
		case "running":
			inflight++
		default:
			inflight--
		}
		if inflight > peak {
			peak = inflight
		}
	}
	if _, err := orchestrate.Ask(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if peak > 2 || peak == 0 {
		t.Errorf("peak sub-agents in flight = %d, want 1..2", peak)
	}
}

func TestAskRetrievalPlannerInARealRun(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Planner = orchestrate.PlannerRetrieval
	cfg.Task = "What drove revenue? How did staffing change?"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		if isPlanner(r) {
			t.Fatal("the retrieval planner called a model")
		}
	}
	if !rec.ModelCalled || rec.DryRun || rec.Answer == "" || rec.Usage.Planner != (llm.Usage{}) {
		t.Errorf("record: called=%v dry=%v answer=%q planner usage=%+v", rec.ModelCalled, rec.DryRun, rec.Answer, rec.Usage.Planner)
	}
	if s.Count() != len(rec.Subtasks)+1 {
		t.Errorf("server saw %d requests for %d subtasks + synthesis", s.Count(), len(rec.Subtasks))
	}
}

func TestAskStreaming(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
			cfg := config(mk(t, s))
			cfg.Stream = true
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range s.Requests() {
				if !r.Stream {
					t.Errorf("request to %s was not streamed", r.Path)
				}
			}
			if rec.Answer != "FINAL: revenue up, costs down." || rec.Usage.Total != s.TotalUsage() {
				t.Errorf("answer %q, usage %+v vs server %+v", rec.Answer, rec.Usage.Total, s.TotalUsage())
			}
		})
	}
}

func TestAskPlannerWithoutSchemaWhenRefused(t *testing.T) {
	refuse := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Fail(400, "invalid_request_error", "output_config is not supported by this model")
	})
	refuse.System = "You are the planner"
	refuse = refuse.Limit(1)
	s := llmtest.NewServer(t, refuse, script(llmtest.Text(planJSON)))
	rec, err := orchestrate.Ask(context.Background(), config(providers["anthropic"](t, s)))
	if err != nil {
		t.Fatal(err)
	}
	var planners []llmtest.RecordedRequest
	for _, r := range s.Requests() {
		if isPlanner(r) {
			planners = append(planners, r)
		}
	}
	if len(planners) != 2 || planners[0].ResponseFormat == nil || planners[1].ResponseFormat != nil {
		t.Fatalf("planner requests: %d; want one with a schema, then one without", len(planners))
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "without one") {
		t.Errorf("no warning about the dropped schema: %v", rec.Warnings)
	}
}
