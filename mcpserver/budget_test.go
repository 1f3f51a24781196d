package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/mcpserver"
)

// budget_check applies baton's reset rule: continue under the threshold,
// reset at the next safe point from it, reset now when the projection would
// not fit the window or this would be the second miss in a row.
func TestBudgetCheckDecisions(t *testing.T) {
	cs := connect(t)
	for _, c := range []struct {
		name string
		args map[string]any
		want mcpserver.BudgetOut
		says []string // figures the reason must name
	}{
		{"under the threshold", map[string]any{"context_tokens": 50000, "window": 100000},
			mcpserver.BudgetOut{Decision: "continue", ProjectedTokens: 50000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 0.5, WindowKnown: true},
			[]string{"50000", "65000", "100000"}},
		{"the next phase reaches it", map[string]any{"context_tokens": 60000, "next_phase_tokens": 5000, "window": 100000},
			mcpserver.BudgetOut{Decision: "reset_at_next_safe_point", ProjectedTokens: 65000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 0.65, WindowKnown: true},
			[]string{"65000", "60000", "5000", "safe point"}},
		{"at a boundary", map[string]any{"context_tokens": 70000, "window": 100000, "at_boundary": true},
			mcpserver.BudgetOut{Decision: "reset_at_next_safe_point", ProjectedTokens: 70000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 0.7, WindowKnown: true},
			[]string{"boundary", "70000"}},
		{"one miss so far", map[string]any{"context_tokens": 70000, "window": 100000, "misses": 1},
			mcpserver.BudgetOut{Decision: "reset_now", ProjectedTokens: 70000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 0.7, WindowKnown: true},
			[]string{"70000", "already went without a complete ledger entry"}},
		{"a miss under the threshold is no reason", map[string]any{"context_tokens": 10000, "window": 100000, "misses": 1},
			mcpserver.BudgetOut{Decision: "continue", ProjectedTokens: 10000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 0.1, WindowKnown: true},
			nil},
		{"would not fit", map[string]any{"context_tokens": 95000, "next_phase_tokens": 10000, "window": 100000},
			mcpserver.BudgetOut{Decision: "reset_now", ProjectedTokens: 105000, ThresholdTokens: 65000, WindowTokens: 100000, Fraction: 1.05, WindowKnown: true},
			[]string{"105000", "not fit"}},
		{"own fraction", map[string]any{"context_tokens": 55000, "window": 100000, "threshold_fraction": 0.5},
			mcpserver.BudgetOut{Decision: "reset_at_next_safe_point", ProjectedTokens: 55000, ThresholdTokens: 50000, WindowTokens: 100000, Fraction: 0.55, WindowKnown: true},
			[]string{"50000", "50%"}},
		{"the model's window", map[string]any{"context_tokens": 64000, "model": "gpt-4o"},
			mcpserver.BudgetOut{Decision: "continue", ProjectedTokens: 64000, ThresholdTokens: int(128000 * budget.DefaultFraction), WindowTokens: 128000, Fraction: 0.5, WindowKnown: true},
			[]string{"128000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out mcpserver.BudgetOut
			if res := call(t, cs, "budget_check", c.args, &out); res.IsError {
				t.Fatalf("tool error: %v", res.Content)
			}
			reason := out.Reason
			out.Reason = ""
			if out != c.want {
				t.Errorf("got  %+v\nwant %+v", out, c.want)
			}
			for _, s := range c.says {
				if !strings.Contains(reason, s) {
					t.Errorf("reason %q does not name %q", reason, s)
				}
			}
			if reason == "" || strings.Contains(reason, "\n") {
				t.Errorf("reason %q: want one sentence", reason)
			}
		})
	}
}

// Bad figures are a one-line tool error naming the figure, and the server
// goes on answering.
func TestBudgetCheckBadInput(t *testing.T) {
	cs := connect(t)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"context_tokens": -1, "window": 1000}, "context_tokens"},
		{map[string]any{"context_tokens": 1, "next_phase_tokens": -5, "window": 1000}, "next_phase_tokens"},
		{map[string]any{"context_tokens": 1, "window": -1000}, "window"},
		{map[string]any{"context_tokens": 1, "window": 1000, "misses": -1}, "misses"},
		{map[string]any{"context_tokens": 1, "window": 1000, "threshold_fraction": 1.5}, "threshold_fraction"},
		{map[string]any{"context_tokens": 1, "window": 1000, "threshold_fraction": -0.2}, "threshold_fraction"},
		{map[string]any{"context_tokens": 1, "model": "no-such-model"}, "no-such-model"},
		{map[string]any{"context_tokens": 1}, "window"},
		{map[string]any{"window": 1000}, "context_tokens"}, // the SDK's validator answers this one
	} {
		wantError(t, cs, "budget_check", c.args, c.want)
	}
	var out mcpserver.BudgetOut
	call(t, cs, "budget_check", map[string]any{"context_tokens": 1, "window": 1000}, &out)
	if out.Decision != "continue" {
		t.Errorf("after the errors: %+v", out)
	}
}
