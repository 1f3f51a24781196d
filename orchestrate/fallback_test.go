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

// missingPlan is n subtasks whose one pointer names no section.
func missingPlan(n int) string {
	var sts []string
	for i := range n {
		sts = append(sts, fmt.Sprintf(`{"task": "Question %d", "skill": "summarization", "context_pointers": {"sections": ["No such section %d"]}}`, i+1, i+1))
	}
	return `{"subtasks": [` + strings.Join(sts, ",") + `], "reasoning": "r"}`
}

// 40 subtasks whose pointers all miss: the whole context is sent only as
// far as the ceiling allows (one single call's worth by default, or the
// tokens given), the others fail with one line each, and the record counts
// the fallbacks and what they sent.
func TestAskFallbackCeiling(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		name string
		max  func(context int) int
		sent int
	}{
		{"default", func(int) int { return 0 }, 1},
		{"three contexts", func(c int) int { return 3*c + 10 }, 3},
		{"none", func(int) int { return -1 }, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(missingPlan(n))))
			cfg := config(providers["openai"](t, s))
			cfg.Planner, cfg.MaxSubtasks = orchestrate.PlannerFull, n
			cfg.MaxFallbackTokens = tc.max(cfg.Counter.Count(cfg.Context))
			rec, err := orchestrate.Ask(context.Background(), cfg)
			a := rec.Accounting
			subagents := 0
			for _, r := range s.Requests() {
				if !isPlanner(r) && !isSynthesis(r) {
					subagents++
				}
			}
			if subagents != tc.sent || a.Fallbacks != tc.sent || a.FallbacksRefused != n-tc.sent {
				t.Errorf("%d sub-agent requests, fallbacks %d, refused %d; want %d sent", subagents, a.Fallbacks, a.FallbacksRefused, tc.sent)
			}
			if a.FallbackInputTokens < tc.sent*a.ContextTokens || a.FallbackInputTokens > a.SubagentInputTokens {
				t.Errorf("fallback input %d for %d fallbacks of a %d-token context (sub-agents %d)", a.FallbackInputTokens, tc.sent, a.ContextTokens, a.SubagentInputTokens)
			}
			if tc.sent == n {
				if err != nil || a.FallbackCeiling != 0 {
					t.Errorf("err %v, ceiling %d", err, a.FallbackCeiling)
				}
				return
			}
			if !errors.Is(err, orchestrate.ErrPartial) || rec.Status != orchestrate.RunPartial {
				t.Errorf("err %v, status %q; want partial", err, rec.Status)
			}
			last := rec.Subtasks[n-1]
			if last.Status != orchestrate.StatusFailed || strings.Contains(last.Error, "\n") || !strings.Contains(last.Error, "--max-fallback-tokens") {
				t.Errorf("last subtask %q: %q", last.Status, last.Error)
			}
			// Each fallback counts against the ceiling the context it
			// carries; the skill's prompt and the task come on top.
			if a.Fallbacks*a.ContextTokens > a.FallbackCeiling || (a.Fallbacks+1)*a.ContextTokens <= a.FallbackCeiling {
				t.Errorf("%d fallbacks of %d tokens under a ceiling of %d", a.Fallbacks, a.ContextTokens, a.FallbackCeiling)
			}
		})
	}
}
