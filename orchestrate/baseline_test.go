package orchestrate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// The single call a user would make instead — the task and the whole
// context in one message — is counted as one message, and the ratio against
// it is what the run really sent, which may be more than the single call.
func TestAskRecordsTheSingleCallBaseline(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := config(providers["openai"](t, s))
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	a := rec.Accounting
	// Counted independently: the one message a user would send.
	c := tokens.Default()
	body := doc
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	want := c.Count("<context>\n" + body + "</context>\n\nTask: " + cfg.Task + "\n")
	if a.SingleCallInputTokens != want {
		t.Errorf("single_call_input_tokens = %d, want %d, the count of the one message", a.SingleCallInputTokens, want)
	}
	if a.SingleCallInputTokens <= a.ContextTokens {
		t.Errorf("single call %d tokens is not larger than the context alone (%d)", a.SingleCallInputTokens, a.ContextTokens)
	}
	if a.SingleCallFits == nil || !*a.SingleCallFits {
		t.Errorf("single_call_fits = %v, want true for a small document", a.SingleCallFits)
	}
	if a.SingleCallSavingsRatio == nil {
		t.Fatal("no ratio against the single call after a real run")
	}
	got := *a.SingleCallSavingsRatio
	exp := 1 - float64(a.OrchestratedInputTokens)/float64(a.SingleCallInputTokens)
	if got != exp {
		t.Errorf("single_call_savings_ratio = %v, want %v", got, exp)
	}
	// A small document: planner + slices + synthesis is more than one call,
	// and the record must say so rather than claim a saving.
	if a.OrchestratedInputTokens > a.SingleCallInputTokens && got >= 0 {
		t.Errorf("ratio %v claims a saving while the run sent %d > %d", got, a.OrchestratedInputTokens, a.SingleCallInputTokens)
	}
}

// A single call that would not fit the model's window is no alternative,
// and the record says so; a dry run has no ratio against it, since its
// orchestrated side lacks the synthesis.
func TestSingleCallOverTheWindowAndDryRun(t *testing.T) {
	cfg := config(nil)
	cfg.DryRun = true
	cfg.Planner = orchestrate.PlannerRetrieval
	cfg.Window = 200 // far below the document
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	a := rec.Accounting
	if a.SingleCallFits == nil || *a.SingleCallFits {
		t.Errorf("single_call_fits = %v, want false with a 200-token window", a.SingleCallFits)
	}
	if a.SingleCallWindow != 200 {
		t.Errorf("single_call_window = %d, want 200", a.SingleCallWindow)
	}
	if a.SingleCallSavingsRatio != nil {
		t.Errorf("a dry run has a single-call ratio %v", *a.SingleCallSavingsRatio)
	}
}
