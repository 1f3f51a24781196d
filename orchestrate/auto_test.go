package orchestrate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// A document of about 30k tokens in a 200k window: the full planner's
// request would take far less than half the window, but reading the whole
// document once and then the slices costs more than the single call. The
// default planner sends less than the single call.
func TestAskAutoBelowTheSingleCall(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(partPlan)))
	cfg := windowConfig(providers["anthropic"](t, s), bigDoc(30, 500))
	cfg.Window = 200000
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	a := rec.Accounting
	if a.ContextTokens < 20000 {
		t.Fatalf("the document has %d tokens, want over 20000", a.ContextTokens)
	}
	if a.OrchestratedInputTokens >= a.SingleCallInputTokens {
		t.Errorf("planner %q sent %d input tokens, the single call %d; want less (%s)", rec.Planner, a.OrchestratedInputTokens, a.SingleCallInputTokens, rec.PlannerReason)
	}
	if rec.Planner != orchestrate.PlannerOutline || !strings.Contains(rec.PlannerReason, fmt.Sprintf("single call %d tokens", a.SingleCallInputTokens)) {
		t.Errorf("planner %q, reason %q; want the outline planner and the figures", rec.Planner, rec.PlannerReason)
	}
}

// A document of about 8k tokens whose outline and slices would cost about
// as much as the document: the default answers in one direct call with the
// whole document, which is the single call itself, and nothing more.
func TestAskAutoDirectOnAMidSizeDocument(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(partPlan)))
	cfg := windowConfig(providers["openai"](t, s), bigDoc(40, 100))
	cfg.Window = 200000
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	a := rec.Accounting
	if a.ContextTokens < orchestrate.AutoFullBelow || a.ContextTokens > 20000 {
		t.Fatalf("the document has %d tokens", a.ContextTokens)
	}
	if rec.Planner != orchestrate.PlannerDirect || a.OrchestratedInputTokens != a.SingleCallInputTokens {
		t.Errorf("planner %q sent %d, single call %d; want one direct call of exactly the single call (%s)", rec.Planner, a.OrchestratedInputTokens, a.SingleCallInputTokens, rec.PlannerReason)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Content, "marker-40 ") {
		t.Fatalf("%d requests; want one holding the whole document", len(reqs))
	}
	if rec.Answer == "" || len(rec.Calls) != 1 || rec.Status != orchestrate.RunOK {
		t.Errorf("answer %q, %d calls, status %q", rec.Answer, len(rec.Calls), rec.Status)
	}
}

// A long text with no headings (a transcript, an article flattened to one
// line) has only passages to point at: the default planner plans over its
// outline of passages instead of answering in one direct call, and the plan
// points at passages.
func TestAskAutoPlansOverPassagesWithoutHeadings(t *testing.T) {
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "Entry %d of the log notes a shipment of crates to dock %d and the weather that morning. ", i, i%40)
	}
	s := llmtest.NewServer(t, script(llmtest.Text(`{"subtasks":[{"task":"What went to dock 7?","skill":"fact-extraction","context_pointers":{"passages":["p3"]}}]}`)))
	cfg := windowConfig(providers["anthropic"](t, s), b.String())
	cfg.Window = 200000
	cfg.Task = "What went to dock 7?"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	a := rec.Accounting
	if a.ContextTokens < 20000 {
		t.Fatalf("the text has %d tokens, want over 20000", a.ContextTokens)
	}
	if rec.Planner != orchestrate.PlannerOutline || a.OrchestratedInputTokens >= a.SingleCallInputTokens {
		t.Fatalf("planner %q sent %d, the single call %d (%s)", rec.Planner, a.OrchestratedInputTokens, a.SingleCallInputTokens, rec.PlannerReason)
	}
	if len(rec.Subtasks) != 1 || rec.Subtasks[0].Slice == nil || rec.Subtasks[0].Slice.Fallback || len(rec.Subtasks[0].Slice.Matched) != 1 || rec.Subtasks[0].Slice.Matched[0].Pointer != "p3" {
		t.Errorf("subtasks %+v", rec.Subtasks)
	}
}
