package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// The summary after a run starts by comparing it with one call holding the
// whole context, saying plainly when the run sent more, and cites the naive
// baseline after; the figures are the record's.
func TestAskSummaryCitesTheSingleCallFirst(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "task")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	a := decodeRecord(t, out).Accounting
	if a.SingleCallInputTokens == 0 || a.SingleCallSavingsRatio == nil {
		t.Fatalf("record lacks the single-call baseline: %+v", a)
	}
	single := fmt.Sprintf("baton: this run sent %.2f× the input of one plain call (%s vs %s tokens)",
		float64(a.OrchestratedInputTokens)/float64(a.SingleCallInputTokens), thousands(a.OrchestratedInputTokens), thousands(a.SingleCallInputTokens))
	naive := fmt.Sprintf("against the naive baseline (every sub-agent given the whole context, %s tokens)", thousands(a.NaiveInputTokens))
	// The example is small: the run sends more than the single call
	// would, and the summary says so first.
	if a.OrchestratedInputTokens <= a.SingleCallInputTokens {
		t.Fatalf("the example run sent %d tokens, no more than the single call's %d: the test needs a run that sends more", a.OrchestratedInputTokens, a.SingleCallInputTokens)
	}
	i, j := strings.Index(errOut, single), strings.Index(errOut, naive)
	if i != 0 || j < 0 {
		t.Errorf("summary does not start with the single call (%q) and cite naive (%q) after:\n%s", single, naive, errOut)
	}
}
