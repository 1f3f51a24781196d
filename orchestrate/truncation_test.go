package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/ollama"
	"github.com/baton-dev/baton/orchestrate"
)

// cutWord is each provider's own word for a reply stopped at max_tokens.
var cutWord = map[string]string{"anthropic": "max_tokens", "openai": "length", "ollama": "length"}

// cutProviders are the providers plus Ollama's native API, whose
// done_reason says "length" for a cut reply.
func cutProviders() map[string]newModel {
	out := map[string]newModel{"ollama": func(t *testing.T, s *llmtest.Server) llm.Model {
		m, err := ollama.New(ollama.Config{BaseURL: s.URL(), Model: "test-model", NumCtx: 32768})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}}
	for name, mk := range providers {
		out[name] = mk
	}
	return out
}

const wholeAnswer = "FINAL: revenue up on the enterprise tier, costs down after the move, prepared by finance."

// cutAt answers the synthesis as a model whose answer needs `need` tokens
// of reply would: when the request's max_tokens is below it, the reply
// stops there, half written, with the provider's word for a cut. Every
// other request is answered as script does.
func cutAt(word string, need int) llmtest.Rule {
	base := script(llmtest.Text(planJSON))
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if !isSynthesis(r) {
			return base.Respond(r)
		}
		if r.MaxTokens < need {
			return llmtest.Reply{Text: wholeAnswer[:len(wholeAnswer)/2], StopReason: word}
		}
		return llmtest.Text(wholeAnswer)
	})
}

func synthesisRequests(s *llmtest.Server) []llmtest.RecordedRequest {
	var out []llmtest.RecordedRequest
	for _, r := range s.Requests() {
		if isSynthesis(r) {
			out = append(out, r)
		}
	}
	return out
}

func synthesisCalls(rec *orchestrate.Record) int {
	n := 0
	for _, c := range rec.Calls {
		if c.Phase == orchestrate.CallSynthesis {
			n++
		}
	}
	return n
}

// A synthesis cut at its max_tokens is asked for again with twice the
// limit; the whole answer of the second call is the run's, the run is ok,
// and both calls are in the record, the usage and the accounting.
func TestAskSynthesisCutIsAskedAgainWithALargerLimit(t *testing.T) {
	for name, mk := range cutProviders() {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, cutAt(cutWord[name], orchestrate.DefaultSynthesisTokens+1))
			rec, err := orchestrate.Ask(context.Background(), config(mk(t, s)))
			if err != nil {
				t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
			}
			if rec.Status != orchestrate.RunOK || rec.Answer != wholeAnswer {
				t.Errorf("status %q, answer %q; want ok and the whole answer", rec.Status, rec.Answer)
			}
			reqs := synthesisRequests(s)
			if len(reqs) != 2 || reqs[0].MaxTokens != orchestrate.DefaultSynthesisTokens || reqs[1].MaxTokens != 2*orchestrate.DefaultSynthesisTokens {
				var limits []int
				for _, r := range reqs {
					limits = append(limits, r.MaxTokens)
				}
				t.Fatalf("synthesis requests with max_tokens %v; want %d then %d", limits, orchestrate.DefaultSynthesisTokens, 2*orchestrate.DefaultSynthesisTokens)
			}
			if got := synthesisCalls(rec); got != 2 {
				t.Errorf("record has %d synthesis calls, want 2", got)
			}
			if want := reqs[0].Usage.Add(reqs[1].Usage); rec.Usage.Synthesis != want {
				t.Errorf("synthesis usage %+v; the fake reported %+v over both calls", rec.Usage.Synthesis, want)
			}
			a := rec.Accounting
			if one := int(reqs[0].Usage.InputTokens); a.SynthesisInputTokens < 2*one*95/100 || a.SynthesisInputTokens > 2*one*105/100 {
				t.Errorf("synthesis input %d; want both prompts of about %d tokens each", a.SynthesisInputTokens, one)
			}
			if !hasWarning(rec, fmt.Sprintf("the synthesis was cut at its %d-token limit", orchestrate.DefaultSynthesisTokens)) {
				t.Errorf("no warning names the cut synthesis: %v", rec.Warnings)
			}
		})
	}
}

// A synthesis that stays cut is never an ok run: cut again at the larger
// limit, or with no room in the window for one, or when the second request
// fails, the run is partial (ErrPartial and ErrTruncated), keeps the cut
// answer and says why in a warning naming the phase and the limit.
func TestAskSynthesisLeftCutIsPartial(t *testing.T) {
	for name, mk := range cutProviders() {
		t.Run(name, func(t *testing.T) {
			word := cutWord[name]
			// Cut at any limit: asked again once, then partial.
			s := llmtest.NewServer(t, cutAt(word, 1<<30))
			cfg := config(mk(t, s))
			cfg.PlannerMax, cfg.SynthesisMax = 1000, 6000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			checkCut(t, rec, err, "and again at 12000")
			if n := len(synthesisRequests(s)); n != 2 || synthesisCalls(rec) != 2 {
				t.Errorf("%d synthesis requests, %d in the record; want 2", n, synthesisCalls(rec))
			}

			// A window that holds the synthesis prompt and its 6,000
			// tokens of reply and no more: no second request.
			n := rec.Accounting.SynthesisInputTokens / 2
			s = llmtest.NewServer(t, cutAt(word, 1<<30))
			cfg = config(mk(t, s))
			cfg.PlannerMax, cfg.SynthesisMax = 1000, 6000
			cfg.Window = n + (n+9)/10 + 6000
			rec, err = orchestrate.Ask(context.Background(), cfg)
			checkCut(t, rec, err, fmt.Sprintf("the %d-token window leaves no room for a larger one", cfg.Window))
			if n := len(synthesisRequests(s)); n != 1 {
				t.Errorf("%d synthesis requests; want 1, with no room for a larger limit", n)
			}

			// A second request the provider refuses (a limit over the
			// model's own output limit): the cut answer is kept.
			s = llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				if isSynthesis(r) && r.MaxTokens > orchestrate.DefaultSynthesisTokens {
					return llmtest.Fail(400, "invalid_request_error", "max_tokens is too large for this model")
				}
				return cutAt(word, 1<<30).Respond(r)
			}))
			rec, err = orchestrate.Ask(context.Background(), config(mk(t, s)))
			checkCut(t, rec, err, "failed")
			if rec.Answer != wholeAnswer[:len(wholeAnswer)/2] {
				t.Errorf("answer %q; want the cut reply kept", rec.Answer)
			}
		})
	}
}

func checkCut(t *testing.T, rec *orchestrate.Record, err error, why string) {
	t.Helper()
	if !errors.Is(err, orchestrate.ErrPartial) || !errors.Is(err, orchestrate.ErrTruncated) {
		t.Fatalf("Ask: %v; want a partial run with a cut reply", err)
	}
	if rec.Status != orchestrate.RunPartial || rec.Answer == "" {
		t.Errorf("status %q, answer %q; want partial with the cut answer", rec.Status, rec.Answer)
	}
	if !strings.Contains(err.Error(), "the synthesis was cut") {
		t.Errorf("error %q does not name the synthesis", err)
	}
	for _, w := range rec.Warnings {
		if strings.HasPrefix(w, "the synthesis was cut at its") && strings.Contains(w, why) && strings.HasSuffix(w, "the answer is incomplete") {
			return
		}
	}
	t.Errorf("no warning names the cut synthesis, its limit and %q: %v", why, rec.Warnings)
}

func hasWarning(rec *orchestrate.Record, s string) bool {
	for _, w := range rec.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// A reduce reply cut at its max_tokens would drop the parts at the end of
// its joined answer: it is asked for again with a larger limit, inside the
// window, and counted as a reduce call; one that stays cut makes the run
// partial.
func TestAskReduceCutIsAskedAgainOrPartial(t *testing.T) {
	const window, subMax = 4000, 600
	for name, mk := range providers {
		for _, need := range []int{subMax + 1, 1 << 30} {
			t.Run(fmt.Sprintf("%s/need %d", name, need), func(t *testing.T) {
				text, planted := corpus(140)
				base := counting()
				s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
					rep := base.Respond(r)
					if isReduce(r) && r.MaxTokens < need {
						rep.Text, rep.StopReason = rep.Text[:len(rep.Text)/2], cutWord[name]
					}
					return rep
				}))
				s.SetContextWindow(window)
				var mu sync.Mutex
				reduceEvents := 0
				cfg := orchestrate.Config{
					Task: "How many times is " + marker + " mentioned in total?", Context: text, Sources: []string{"notes.md"},
					Model: mk(t, s), ModelName: "test-model", Window: window,
					SubagentMax: subMax, SynthesisMax: 600, PlannerMax: 600, Concurrency: 3,
					Progress: func(e orchestrate.Event) {
						if e.Phase == "reduce" {
							mu.Lock()
							reduceEvents++
							mu.Unlock()
						}
					},
				}
				rec, err := orchestrate.Ask(context.Background(), cfg)
				if over := overWindow(s); len(over) > 0 {
					t.Errorf("requests over the window were sent: %v", over)
				}
				var first, again int
				var usage llm.Usage
				for _, r := range s.Requests() {
					if !isPlanner(r) && !isSynthesis(r) {
						usage = usage.Add(r.Usage)
					}
					switch {
					case !isReduce(r):
					case r.MaxTokens == subMax:
						first++
					case r.MaxTokens > subMax && r.MaxTokens <= 2*subMax:
						// Twice the limit, or what the window leaves.
						again++
						if n := recordedTokens(r) + r.MaxTokens; n > window {
							t.Errorf("a reduce asked again with %d tokens with its max_tokens, over the %d-token window", n, window)
						}
					default:
						t.Errorf("a reduce request with max_tokens %d", r.MaxTokens)
					}
				}
				st := rec.Subtasks[0]
				if first < 2 || again != first || st.ReduceCalls != first+again || rec.Accounting.ReduceCalls != first+again || reduceEvents != first+again {
					t.Errorf("%d reduce requests cut and %d asked again; the record counts %d (accounting %d, %d progress events)",
						first, again, st.ReduceCalls, rec.Accounting.ReduceCalls, reduceEvents)
				}
				if st.Usage != usage {
					t.Errorf("subtask usage %+v; the fake reported %+v", st.Usage, usage)
				}
				if !hasWarning(rec, fmt.Sprintf("reduce round 1, group 1 of %d reply was cut at its %d-token limit", rec.Subtasks[0].Parts, subMax)) && !hasWarning(rec, fmt.Sprintf("reply was cut at its %d-token limit", subMax)) {
					t.Errorf("no warning names a cut reduce and its limit: %v", rec.Warnings)
				}
				if need == subMax+1 {
					if err != nil || rec.Status != orchestrate.RunOK || rec.Answer != fmt.Sprintf("FINAL count: %d", planted) {
						t.Errorf("Ask: %v, status %q, answer %q; want ok and the count %d", err, rec.Status, rec.Answer, planted)
					}
					return
				}
				if !errors.Is(err, orchestrate.ErrTruncated) || rec.Status != orchestrate.RunPartial || !strings.Contains(err.Error(), "reduce round") {
					t.Errorf("Ask: %v, status %q; want partial, naming a reduce", err, rec.Status)
				}
			})
		}
	}
}

// A plan cut at its max_tokens (here not valid JSON) is asked for again
// with a larger limit, not repaired at the limit that cut it, and the
// warning says the reply was cut.
func TestAskCutPlanIsAskedAgainWithALargerLimit(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			base := script(llmtest.Text(planJSON))
			s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				if isPlanner(r) && r.MaxTokens <= orchestrate.DefaultPlannerTokens {
					return llmtest.Reply{Text: planJSON[:len(planJSON)/2], StopReason: cutWord[name]}
				}
				return base.Respond(r)
			}))
			rec, err := orchestrate.Ask(context.Background(), config(mk(t, s)))
			if err != nil {
				t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
			}
			var limits []int
			for _, r := range s.Requests() {
				if isPlanner(r) {
					limits = append(limits, r.MaxTokens)
				}
			}
			if len(limits) != 2 || limits[0] != orchestrate.DefaultPlannerTokens || limits[1] != 2*orchestrate.DefaultPlannerTokens {
				t.Errorf("planner requests with max_tokens %v; want the plan, then again with twice the limit", limits)
			}
			if !hasWarning(rec, fmt.Sprintf("the plan was cut at its %d-token limit (max_tokens); asked again with %d", orchestrate.DefaultPlannerTokens, 2*orchestrate.DefaultPlannerTokens)) {
				t.Errorf("no warning says the plan was cut: %v", rec.Warnings)
			}
		})
	}
}
