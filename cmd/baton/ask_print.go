package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
)

func printDryRun(w io.Writer, rec *orchestrate.Record) {
	// Why no model was called, when no provider was found, went to
	// stderr already, once.
	fmt.Fprintln(w, "No model was called: this is a dry run.")
	if line := singleCallLine(rec); line != "" {
		fmt.Fprintln(w, line+".")
	}
	if rec.Planner == orchestrate.PlannerDirect {
		fmt.Fprintln(w, "No plan: a real run answers in one direct call with the whole context, since no plan would send less (--planner full or outline shows one).")
	} else {
		fmt.Fprintf(w, "Plan (%s planner, %s):\n", rec.Planner, plural(len(rec.Subtasks), "subtask"))
	}
	for _, s := range rec.Subtasks {
		fmt.Fprintf(w, "  %d. [%s] %s\n", s.Index+1, s.Skill, s.Task)
		if s.Slice == nil {
			continue
		}
		var where []string
		for _, m := range s.Slice.Matched {
			if m.Heading != "" {
				where = append(where, fmt.Sprintf("%q (lines %d-%d)", m.Heading, m.StartLine, m.EndLine))
			} else {
				where = append(where, fmt.Sprintf("lines %d-%d", m.StartLine, m.EndLine))
			}
		}
		switch {
		case s.Scope == "all":
			where = append(where, "whole context (scope all)")
		case s.Slice.Fallback:
			where = append(where, "whole context (no pointer matched)")
		}
		fmt.Fprintf(w, "     slice: %s — %d tokens", strings.Join(where, ", "), s.ContextTokens)
		if s.MapCalls > 0 {
			fmt.Fprintf(w, "; map-reduce over %s (%s; reduce requests not estimated)", plural(s.Parts, "part"), plural(s.MapCalls, "map request"))
		}
		fmt.Fprintln(w)
	}
	a := rec.Accounting
	fmt.Fprintf(w, "Estimate (%s, local count):\n", a.Counter)
	fmt.Fprintf(w, "  context:                 %d tokens\n", a.ContextTokens)
	switch rec.EstimatedPlanner {
	case orchestrate.PlannerDirect:
		fmt.Fprintf(w, "  planner input:           0 tokens (a real run would answer in one direct call with the whole context)\n")
	case orchestrate.PlannerLLM, orchestrate.PlannerOutline:
		name := "full"
		if rec.EstimatedPlanner == orchestrate.PlannerOutline {
			name = "outline"
		}
		fmt.Fprintf(w, "  planner input:           %d tokens (the %s planner a real run would use)\n", a.PlannerInputTokens, name)
	default:
		fmt.Fprintf(w, "  planner input:           %d tokens (a real run would plan without a model)\n", a.PlannerInputTokens)
	}
	fmt.Fprintf(w, "  sub-agent input:         %d tokens\n", a.SubagentInputTokens)
	if rec.Planner == orchestrate.PlannerDirect {
		fmt.Fprintf(w, "  orchestrated input:      %d tokens (the direct call)\n", a.OrchestratedInputTokens)
	} else {
		fmt.Fprintf(w, "  orchestrated input:      %d tokens (synthesis not included)\n", a.OrchestratedInputTokens)
	}
	fits := "fits"
	if a.SingleCallFits != nil && !*a.SingleCallFits {
		fits = "would not fit"
	}
	fmt.Fprintf(w, "  single call:             %d tokens (task and whole context in one request; %s the %d-token window)\n", a.SingleCallInputTokens, fits, a.SingleCallWindow)
	fmt.Fprintf(w, "  naive input:             %d tokens (whole context to every sub-agent)\n", a.NaiveInputTokens)
	fmt.Fprintf(w, "  naive saving:            %.1f%% against the naive input, a baseline no user would choose; the single call is the one to beat\n", 100*a.SavingsRatio)
}

func printSummary(w io.Writer, rec *orchestrate.Record) {
	self, deleg, failed := 0, 0, 0
	for _, s := range rec.Subtasks {
		if s.Mode == orchestrate.ModeSelf {
			self++
		} else {
			deleg++
		}
		if s.Status == orchestrate.StatusFailed {
			failed++
		}
	}
	u := rec.Usage.Total
	a := rec.Accounting
	cost := "cost unknown" // a warning below says why
	if rec.CostUSD != nil {
		cost = "cost " + pricing.FormatUSD(*rec.CostUSD) + " at list prices"
	}
	if line := singleCallLine(rec); line != "" && rec.Answer != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	what := fmt.Sprintf("%d subtasks (%d self-answered, %d delegated, %d failed)", len(rec.Subtasks), self, deleg, failed)
	if rec.Planner == orchestrate.PlannerDirect {
		what = "answered in one direct call with the whole context, no plan cheaper than that"
	}
	fmt.Fprintf(w, "baton: %s; provider usage: %d input, %d output, %d cache read, %d cache write tokens; %s\n",
		what, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, cost)
	if a.FallbacksRefused > 0 {
		fmt.Fprintf(w, "baton: %s not sent the whole context again: the fallbacks reached --max-fallback-tokens (%d)\n", plural(a.FallbacksRefused, "subtask"), a.FallbackCeiling)
	}
	if a.MapCalls > 0 {
		fmt.Fprintf(w, "baton: map-reduce: %s and %s\n", plural(a.MapCalls, "map request"), plural(a.ReduceCalls, "reduce request"))
	}
	if a.NaiveInputTokens > 0 {
		fmt.Fprintf(w, "baton: %s\n", naiveLine(a))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
