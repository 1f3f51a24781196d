package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// A planner that answers garbage twice: by default the run falls back to
// the retrieval planner, answers and exits 0 with a warning on stderr and in
// the record.
func TestAskInvalidPlanFallsBack(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("no plan here")))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	// A window the single call does not fit, so auto plans from the
	// outline.
	code, out, errOut := runDefault(t, "", "ask", "--doc", exampleDoc, "--window", "9000", "--no-save", "--json", "What caused the outage?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "warning: the outline planner failed") || !strings.Contains(errOut, "retrieval planner") {
		t.Errorf("no fallback warning on stderr:\n%s", errOut)
	}
	rec := decodeRecord(t, out)
	if rec.Status != orchestrate.RunOK || rec.Planner != orchestrate.PlannerRetrieval || rec.PlannerMode != orchestrate.PlannerAuto {
		t.Errorf("status %q, planner %q, mode %q", rec.Status, rec.Planner, rec.PlannerMode)
	}
	if !rec.ModelCalled || rec.Usage.Planner.InputTokens == 0 || rec.Answer == "" {
		t.Errorf("model_called %v, planner usage %+v, answer %q", rec.ModelCalled, rec.Usage.Planner, rec.Answer)
	}
}

// --window sets every model's window: the fake refuses anything over it, and
// baton sends nothing over it; the full planner request, which would not
// fit, is replaced by the outline planner's.
func TestAskWindowFlag(t *testing.T) {
	isolateEnv(t)
	const window = 6000 // the example report alone is about 6,900 tokens
	// The outline planner's plan names a path of the outline.
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "You are the planner") {
			return llmtest.Text(`{"subtasks": [{"task": "Explain the retry storm", "skill": "causal-reasoning", "context_pointers": {"sections": ["Post-Incident Review: Payments API Outage, 11 March 2025 (INC-4127) > 4. Root cause analysis > 4.3 Retry storm"], "line_ranges": []}, "answer": ""}], "reasoning": "one"}`)
		}
		return askScript().Respond(r)
	}))
	s.SetContextWindow(window)
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	runs := t.TempDir()
	code, _, errOut := runDefault(t, "", "ask", "--doc", exampleDoc, "--provider", "openai", "--model", "gpt-4o",
		"--window", "6000", "--runs-dir", runs, "What caused the retry storm?")
	for _, r := range s.Requests() {
		planner := strings.Contains(r.System, "You are the planner")
		if r.Status == 400 || planner && !strings.Contains(r.System, "outline instead") {
			t.Errorf("sent %s with status %d (planner: %v)", r.Path, r.Status, planner)
		}
	}
	if code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(runs, "*.json"))
	if len(files) != 1 {
		t.Fatalf("records saved: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	rec := decodeRecord(t, string(data))
	if len(rec.Windows) == 0 || rec.Windows[0].Tokens != window || rec.Windows[0].Source != orchestrate.WindowOverride {
		t.Errorf("windows = %+v", rec.Windows)
	}
	if rec.Planner != orchestrate.PlannerOutline || !strings.Contains(rec.PlannerReason, "6000-token window") {
		t.Errorf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
	}
	if len(rec.Subtasks) != 1 || rec.Subtasks[0].Slice == nil || rec.Subtasks[0].Slice.Fallback || rec.Subtasks[0].Slice.Matched[0].StartLine != 118 {
		t.Errorf("the path did not cut the retry storm section: %+v", rec.Subtasks)
	}
}

// A dry run checks the estimate against the window too: the full planner,
// which would take more than the share of the window auto allows, is not
// counted; the outline planner a real run would use is, and the reason
// says so and that the figure is an estimate.
func TestAskDryRunChecksTheWindow(t *testing.T) {
	isolateEnv(t)
	code, out, errOut := runDefault(t, "", "ask", "--doc", exampleDoc, "--dry-run", "--json", "--no-save", "--model", "gpt-4", "What caused the retry storm?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if rec.Status != orchestrate.RunDryRun || rec.ModelCalled {
		t.Errorf("status %q, model_called %v", rec.Status, rec.ModelCalled)
	}
	a := rec.Accounting
	if a.PlannerInputTokens == 0 || a.PlannerInputTokens >= a.ContextTokens || !strings.Contains(rec.PlannerReason, "8192-token window") ||
		!strings.Contains(rec.PlannerReason, "outline planner") || !strings.Contains(rec.PlannerReason, "estimate") {
		t.Errorf("planner input %d of a %d-token context, reason %q; want the outline prompt's count, the window named, and an estimate", a.PlannerInputTokens, a.ContextTokens, rec.PlannerReason)
	}
}
