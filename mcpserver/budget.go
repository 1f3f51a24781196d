package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

// The decisions budget_check returns.
const (
	DecisionContinue    = "continue"
	DecisionResetAtSafe = "reset_at_next_safe_point"
	DecisionResetNow    = "reset_now"
)

const budgetCheckHelp = "Decide whether a session must reset its context, by the rule `baton run` enforces: the projection (the context now plus what the next phase adds) against threshold_fraction × the model's window. Returns continue, reset_at_next_safe_point (write a complete ledger entry with ledger_append, then start a fresh session from it) or reset_now (the projection would not fit the window, or this is the second miss in a row in this phase)."

// BudgetIn is one evaluation of the context budget.
type BudgetIn struct {
	ContextTokens     int     `json:"context_tokens" jsonschema:"the context size now in tokens: the last turn's input plus cache read and cache write tokens, as the provider reported them"`
	Window            int     `json:"window,omitempty" jsonschema:"the model's context window in tokens; 0 for the window baton knows for model"`
	Model             string  `json:"model,omitempty" jsonschema:"the model, for its known window when window is 0"`
	ThresholdFraction float64 `json:"threshold_fraction,omitempty" jsonschema:"the fraction of the window at which a reset is due, in (0, 1); 0 for the default 0.65"`
	NextPhaseTokens   int     `json:"next_phase_tokens,omitempty" jsonschema:"what the next phase (or the next tool round) is expected to add, in tokens"`
	AtBoundary        bool    `json:"at_boundary,omitempty" jsonschema:"true when evaluating at a phase boundary rather than between tool rounds"`
	Misses            int     `json:"misses,omitempty" jsonschema:"consecutive misses so far in this phase: due resets that could not happen for want of a complete ledger entry"`
}

// BudgetOut is the decision with the figures it was made from.
type BudgetOut struct {
	Decision        string  `json:"decision" jsonschema:"continue, reset_at_next_safe_point or reset_now"`
	Reason          string  `json:"reason"`
	ProjectedTokens int     `json:"projected_tokens"`
	ThresholdTokens int     `json:"threshold_tokens"`
	WindowTokens    int     `json:"window_tokens"`
	Fraction        float64 `json:"fraction" jsonschema:"projected_tokens / window_tokens"`
	WindowKnown     bool    `json:"window_known" jsonschema:"true: the window was given or baton knows the model's (an unknown window is an error, never a guess)"`
}

func (s *Server) addBudgetTools() {
	addTool(s, &mcp.Tool{Name: "budget_check", Annotations: readOnly, Description: budgetCheckHelp}, s.budgetCheck)
}

func (s *Server) budgetCheck(_ context.Context, _ *mcp.CallToolRequest, in BudgetIn) (*mcp.CallToolResult, BudgetOut, error) {
	out, err := checkBudget(in)
	return nil, out, err
}

// checkBudget is the rule of package budget applied to one measurement:
// the same Session the runner keeps, fed the context size and the misses
// the host counted.
func checkBudget(in BudgetIn) (BudgetOut, error) {
	switch {
	case in.ContextTokens < 0:
		return BudgetOut{}, fmt.Errorf("context_tokens is %d; want 0 or more", in.ContextTokens)
	case in.NextPhaseTokens < 0:
		return BudgetOut{}, fmt.Errorf("next_phase_tokens is %d; want 0 or more", in.NextPhaseTokens)
	case in.Window < 0:
		return BudgetOut{}, fmt.Errorf("window is %d; want a positive window, or 0 for the model's known one", in.Window)
	case in.Misses < 0:
		return BudgetOut{}, fmt.Errorf("misses is %d; want 0 or more", in.Misses)
	}
	window, known := tokens.Window(in.Model, in.Window)
	if !known {
		// tokens.Window falls back to a modest default for an unknown
		// model; a reset decision made on a guessed window would be wrong
		// in either direction, so the host is asked for the figure.
		if in.Model == "" {
			return BudgetOut{}, errors.New("no window: give window, or a model whose window baton knows")
		}
		return BudgetOut{}, fmt.Errorf("baton does not know the window of model %q; give window", in.Model)
	}
	fraction := in.ThresholdFraction
	if fraction == 0 {
		fraction = budget.DefaultFraction
	}
	b, err := budget.New(window, fraction)
	if err != nil {
		return BudgetOut{}, err
	}
	sess := b.NewSession()
	sess.Observe(llm.Usage{InputTokens: int64(in.ContextTokens)})
	var d budget.Decision
	if in.AtBoundary {
		d = sess.AtBoundary(in.NextPhaseTokens)
	} else {
		d = sess.MidPhase(in.NextPhaseTokens)
	}
	out := BudgetOut{ProjectedTokens: d.Projected, ThresholdTokens: d.Threshold, WindowTokens: d.Window, Fraction: d.Fraction, WindowKnown: known}
	figures := fmt.Sprintf("the projection of %d tokens (%d in the context now + %d next) is %.1f%% of the %d-token window, against a threshold of %d tokens (%.0f%%)",
		d.Projected, in.ContextTokens, in.NextPhaseTokens, 100*d.Fraction, d.Window, d.Threshold, 100*b.Fraction)
	if !d.Reset {
		out.Decision, out.Reason = DecisionContinue, "Continue: "+figures+"."
		return out, nil
	}
	if d.Projected > d.Window {
		out.Decision = DecisionResetNow
		out.Reason = "Reset now: " + figures + ", so the next request would not fit the window at all; reset before sending it, with a ledger entry composed from state.yaml and the files on disk."
		return out, nil
	}
	// The misses the host counted, replayed on the session, then the one
	// this evaluation would add if the reset again could not happen: the
	// count that forces a reset is the budget package's, not restated here.
	for range in.Misses {
		sess.Miss()
	}
	if sess.Miss() {
		out.Decision = DecisionResetNow
		missed := "a due reset in this phase already went"
		if in.Misses > 1 {
			missed = fmt.Sprintf("%d due resets in this phase already went", in.Misses)
		}
		out.Reason = fmt.Sprintf("Reset now: %s, and %s without a complete ledger entry (%d misses in a row force the reset).",
			figures, missed, budget.MissesBeforeForcedReset)
		return out, nil
	}
	out.Decision = DecisionResetAtSafe
	where := "at the next safe point (between tool rounds)"
	if in.AtBoundary {
		where = "at this phase boundary"
	}
	out.Reason = fmt.Sprintf("Reset %s: %s; write a complete ledger entry first, then start a fresh session from it.", where, figures)
	return out, nil
}
