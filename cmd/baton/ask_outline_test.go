package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// pricingPath finds the outline's Pricing paths in a planner request, as a
// model would copy them.
var pricingPath = regexp.MustCompile(`(?m)^(.+ > Pricing) \[lines`)

// --planner outline end to end over two files that both have a Pricing
// section: the planner reads the outline (paths, no body text), plans with
// its paths, and each vendor's sub-agent gets its own file's Pricing.
func TestAskPlannerOutlineEndToEnd(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	files := map[string]string{
		"acme.md":   "# Acme\n\nAcme sells anvils. Its founder lives in the desert.\n\n## Pricing\n\nAnvils cost 40 dollars. The price has held since 1949, marker-acme.\n",
		"globex.md": "# Globex\n\nGlobex sells widgets. Nobody has audited its factory since 2019.\n\n## Pricing\n\nSeats cost 12 euros. Discounts start at 100 seats, marker-globex.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			var subtasks []map[string]any
			for _, m := range pricingPath.FindAllStringSubmatch(r.Messages[0].Content, -1) {
				subtasks = append(subtasks, map[string]any{
					"task": "What is the price in " + m[1] + "?", "skill": "lookup", "answer": "",
					"context_pointers": map[string]any{"sections": []string{m[1]}, "line_ranges": []any{}},
				})
			}
			plan, _ := json.Marshal(map[string]any{"subtasks": subtasks, "reasoning": "one per vendor"})
			return llmtest.Text(string(plan))
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text("Acme: 40 dollars; Globex: 12 euros.")
		default:
			return llmtest.Text("found: " + r.Messages[0].Content)
		}
	}))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", dir, "--planner", "outline", "--json", "--no-save", "What do the vendors charge?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	outlineSeen := ""
	for _, r := range s.Requests() {
		if strings.Contains(r.System, "You are the planner") {
			outlineSeen += r.Messages[0].Content
		}
	}
	if rec.Planner != orchestrate.PlannerOutline || rec.PlannerMode != orchestrate.PlannerOutline || rec.Status != orchestrate.RunOK {
		t.Errorf("planner %q, mode %q, status %q", rec.Planner, rec.PlannerMode, rec.Status)
	}
	if strings.Contains(outlineSeen, "Nobody has audited") || strings.Contains(outlineSeen, "marker-") {
		t.Errorf("the outline planner was sent body text:\n%s", outlineSeen)
	}
	if len(rec.Subtasks) != 2 {
		t.Fatalf("subtasks = %+v; want one per Pricing path in the outline:\n%s", rec.Subtasks, outlineSeen)
	}
	for _, st := range rec.Subtasks {
		own, other := "marker-acme", "marker-globex"
		if strings.Contains(st.Task, "globex.md") {
			own, other = other, own
		}
		if !strings.Contains(st.Output, own) || strings.Contains(st.Output, other) {
			t.Errorf("subtask %q was sent the wrong Pricing: %q", st.Task, st.Output)
		}
	}
	if rec.Answer == "" || !strings.Contains(errOut, "baton: 2 subtasks") {
		t.Errorf("answer %q, stderr %s", rec.Answer, errOut)
	}
}
