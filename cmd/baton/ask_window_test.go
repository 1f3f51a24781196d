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
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--no-save", "--json", "What caused the outage?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "warning: the LLM planner failed") || !strings.Contains(errOut, "retrieval planner") {
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
// baton sends nothing over it; the planner request, which would not fit, is
// replaced by the retrieval planner.
func TestAskWindowFlag(t *testing.T) {
	isolateEnv(t)
	const window = 6000 // the example report alone is about 6,900 tokens
	s := llmtest.NewServer(t, askScript())
	s.SetContextWindow(window)
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	runs := t.TempDir()
	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--provider", "openai", "--model", "gpt-4o",
		"--window", "6000", "--runs-dir", runs, "What caused the retry storm?")
	for _, r := range s.Requests() {
		if r.Status == 400 || strings.Contains(r.System, "You are the planner") {
			t.Errorf("sent %s with status %d (planner: %v)", r.Path, r.Status, strings.Contains(r.System, "You are the planner"))
		}
	}
	if code != exitOK && code != exitPartial {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "window") {
		t.Errorf("no warning names the window:\n%s", errOut)
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
	if rec.Planner != orchestrate.PlannerRetrieval || !strings.Contains(rec.PlannerReason, "window") {
		t.Errorf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
	}
}

// A dry run checks the estimate against the window too: the planner that
// would not fit is not counted, and the reason says why.
func TestAskDryRunChecksTheWindow(t *testing.T) {
	isolateEnv(t)
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--dry-run", "--json", "--no-save", "--model", "gpt-4", "What caused the retry storm?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if rec.Status != orchestrate.RunDryRun || rec.ModelCalled {
		t.Errorf("status %q, model_called %v", rec.Status, rec.ModelCalled)
	}
	if rec.Accounting.PlannerInputTokens != 0 || !strings.Contains(rec.PlannerReason, "8192-token window") {
		t.Errorf("planner input %d, reason %q; want 0 and the window named", rec.Accounting.PlannerInputTokens, rec.PlannerReason)
	}
}
