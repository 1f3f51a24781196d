package orchestrate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// A pointer that matches nothing while its sibling matches is not dropped
// silently: the record warns with the nearest headings, and the subtask's
// slice says which pointer missed and why.
func TestAskReportsMissedPointer(t *testing.T) {
	p := `{"subtasks": [{"task": "Rate the outlook", "skill": "summarization", "context_pointers": {"sections": ["Outlook", "Revenue Forecast"]}}], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(p)))
	rec, err := orchestrate.Ask(context.Background(), config(providers["openai"](t, s)))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	w := strings.Join(rec.Warnings, "\n")
	if !strings.Contains(w, `subtask 1: section "Revenue Forecast" matched nothing; nearest: "Quarterly report > Revenue"`) {
		t.Errorf("warnings lack the missed pointer:\n%s", w)
	}
	sl := rec.Subtasks[0].Slice
	if sl == nil || sl.Fallback || len(sl.Matched) != 1 || len(sl.Misses) != 1 || sl.Misses[0].Pointer != "Revenue Forecast" || sl.Misses[0].Ambiguous {
		t.Errorf("slice %+v", sl)
	}
}

// Two vendors' Pricing: a bare title cuts neither (the subtask falls back
// and the record says it was ambiguous); a path cuts the right one.
func TestAskAmbiguousPointer(t *testing.T) {
	p := `{"subtasks": [{"task": "Globex price", "skill": "summarization", "context_pointers": {"sections": ["Pricing"]}},
	{"task": "Acme price", "skill": "summarization", "context_pointers": {"sections": ["Acme > Pricing"]}}], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(p)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Context = "# Vendors\n\n## Acme\n\n### Pricing\n\nmarker-acme\n\n## Globex\n\n### Pricing\n\nmarker-globex\n"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	amb := rec.Subtasks[0].Slice
	if amb == nil || !amb.Fallback || len(amb.Misses) != 1 || !amb.Misses[0].Ambiguous || len(amb.Misses[0].Candidates) != 2 {
		t.Errorf("bare Pricing: slice %+v, want an ambiguous miss and a fallback", amb)
	}
	if w := strings.Join(rec.Warnings, "\n"); !strings.Contains(w, `subtask 1: section "Pricing" is ambiguous`) {
		t.Errorf("warnings lack the ambiguity:\n%s", w)
	}
	for _, r := range s.Requests() {
		if strings.Contains(r.Messages[0].Content, "Your subtask: Acme price") && strings.Contains(r.Messages[0].Content, "marker-globex") {
			t.Errorf("the Acme subtask was sent Globex's price")
		}
	}
}
