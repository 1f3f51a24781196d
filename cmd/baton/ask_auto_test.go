package main

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// With no --planner flag, the example (about 6,900 tokens) is answered in
// one direct call with the whole document: exactly the single call, never
// more (the full planner sent 1.9 times as much before synthesis).
func TestAskDefaultOnTheExampleIsTheSingleCall(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, _, errOut := runDefault(t, "", "ask", "--doc", exampleDoc, "--no-save", "What caused the outage?")
	if code != exitOK || !strings.Contains(errOut, "answered in one direct call") {
		t.Errorf("exit %d, the summary does not say the run was one direct call:\n%s", code, errOut)
	}
	code, out, errOut := runDefault(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "What caused the outage?")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	a := rec.Accounting
	if rec.Planner != orchestrate.PlannerDirect || a.OrchestratedInputTokens != a.SingleCallInputTokens || s.Count() != 2 {
		t.Errorf("planner %q sent %d in %d requests, single call %d (%s)", rec.Planner, a.OrchestratedInputTokens, s.Count(), a.SingleCallInputTokens, rec.PlannerReason)
	}
	if rec.Answer == "" || !strings.Contains(rec.PlannerReason, "single call") {
		t.Errorf("answer %q, reason %q", rec.Answer, rec.PlannerReason)
	}
}

// A ceiling below -1 is refused before anything runs.
func TestAskMaxFallbackTokensBadInput(t *testing.T) {
	isolateEnv(t)
	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--max-fallback-tokens", "-5", "Why?")
	if code != exitUsage || !strings.Contains(errOut, "--max-fallback-tokens must be") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
