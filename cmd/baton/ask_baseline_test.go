package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// The summary after a run compares it with one call holding the whole
// context first, and with the naive baseline after; both figures are the
// record's.
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
	single := fmt.Sprintf("vs %d in one call with the whole context", a.SingleCallInputTokens)
	naive := fmt.Sprintf("vs %d naive", a.NaiveInputTokens)
	i, j := strings.Index(errOut, single), strings.Index(errOut, naive)
	if i < 0 || j < 0 || i > j {
		t.Errorf("summary does not cite the single call (%q) before naive (%q):\n%s", single, naive, errOut)
	}
	// The example is small: the run sends more than the single call would,
	// and the line says "more", not "saved".
	if a.OrchestratedInputTokens > a.SingleCallInputTokens && !strings.Contains(errOut, "% more)") {
		t.Errorf("a run that sent more than the single call does not say so:\n%s", errOut)
	}
}
