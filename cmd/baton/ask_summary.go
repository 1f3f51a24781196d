package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/baton-dev/baton/internal/report"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

// singleCallLine compares the input a run sent (or, in a dry run, would
// send before its synthesis) with one plain call holding the task and the
// whole context: what a user would do instead, so it leads every summary.
// When baton sends more, it says so first. "" when the record has no
// single-call figure.
func singleCallLine(rec *orchestrate.Record) string {
	a := rec.Accounting
	single, sent := a.SingleCallInputTokens, a.OrchestratedInputTokens
	if single <= 0 {
		return ""
	}
	verb, plain, tail := "baton: this run sent", "one plain call", ""
	if rec.DryRun {
		verb, tail = "baton would send", ", synthesis not included"
	}
	if a.SingleCallFits != nil && !*a.SingleCallFits {
		return fmt.Sprintf("%s %s input tokens%s; %s (the task and the whole context, %s tokens) would not fit the %s-token window",
			verb, thousands(sent), tail, plain, thousands(single), thousands(a.SingleCallWindow))
	}
	if planner(rec) == orchestrate.PlannerDirect {
		// auto found no plan that would send less: the run is the plain call.
		return fmt.Sprintf("%s exactly the input of %s (%s tokens): no plan would send less, so the answer comes from that one call", verb, plain, thousands(single))
	}
	figures := fmt.Sprintf("(%s vs %s tokens%s)", thousands(sent), thousands(single), tail)
	if sent == single {
		return fmt.Sprintf("%s the same input as %s %s", verb, plain, figures)
	}
	if sent > single {
		why := "on this context a plain call is cheaper"
		if planner(rec) == orchestrate.PlannerLLM {
			why = "the full planner reads the whole context, so on a context this small a plain call is cheaper"
		}
		return fmt.Sprintf("%s %s× the input of %s %s: %s", verb, strconv.FormatFloat(float64(sent)/float64(single), 'f', 2, 64), plain, figures, why)
	}
	return fmt.Sprintf("%s %.1f%% less input than %s %s", verb, 100*float64(single-sent)/float64(single), plain, figures)
}

// naiveLine states the saving against the naive baseline for what it is:
// every sub-agent given the whole context, which no user would do.
func naiveLine(a orchestrate.Accounting) string {
	return fmt.Sprintf("against the naive baseline (every sub-agent given the whole context, %s tokens): %.1f%% saved",
		thousands(a.NaiveInputTokens), 100*a.SavingsRatio)
}

// planner is the planner a run used, or in a dry run the one a real run
// would use.
func planner(rec *orchestrate.Record) string {
	if rec.DryRun && rec.EstimatedPlanner != "" {
		return rec.EstimatedPlanner
	}
	return rec.Planner
}

// thousands writes n with separators a reader can scan: 12,345.
func thousands(n int) string { return report.Thousands(int64(n)) }

// providerHint is what a user can check after a provider error that is
// almost always their setting: a refused key (401, 403) or a base URL where
// nothing answers (connection refused, an unknown host). "" for anything
// else. provider is the provider's name as the selection reports it.
func providerHint(err error, provider string) string {
	var pe *llm.ProviderError
	if errors.As(err, &pe) && pe.Provider != "" {
		provider = pe.Provider
	}
	keyVar, urlVar := "", ""
	switch provider {
	case "anthropic":
		keyVar, urlVar = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
	case "openai":
		keyVar, urlVar = "OPENAI_API_KEY", "OPENAI_BASE_URL"
	case "ollama":
		urlVar = "OLLAMA_HOST"
	default:
		return ""
	}
	switch {
	case pe != nil && (pe.StatusCode == 401 || pe.StatusCode == 403):
		if keyVar == "" {
			return fmt.Sprintf("hint: the server at %s refused the request (HTTP %d): check that OLLAMA_HOST names the server you mean", urlVar, pe.StatusCode)
		}
		return fmt.Sprintf("hint: the provider refused the API key (HTTP %d): check %s", pe.StatusCode, keyVar)
	case unreachable(err):
		return fmt.Sprintf("hint: no server answered at the provider's address: check %s", urlVar)
	}
	return ""
}

// unreachable reports a connection refused or a host name that does not
// resolve. The text is checked too: an SDK may keep only the text of the
// transport error, and Windows words a refusal its own way.
func unreachable(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"connection refused", "actively refused", "no such host", "server misbehaving"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
