package orchestrate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// An .mdx file among several documents is outlined as the whole context
// reads it: as an MDX page, by its name, so the heading under its
// <details> line is in the outline the planner gets and its path cuts that
// section.
func TestOutlinePlannerReadsMDXPartsByName(t *testing.T) {
	page := "<details>\n<summary>Older versions</summary>\n## Node 16\nNode 16 needs a flag, marker-node16.\n</details>\n## Node 18\nNode 18 works as is, marker-node18.\n"
	notes := "# Notes\n\nNothing here but notes, marker-notes.\n"
	combined, _ := slice.Combine([]slice.NamedDoc{{Name: "setup.mdx", Data: []byte(page)}, {Name: "notes.md", Data: []byte(notes)}})
	plan := `{"subtasks": [
 {"task": "Node 16", "skill": "lookup", "context_pointers": {"sections": ["setup.mdx > Node 16"], "line_ranges": []}, "answer": ""}
], "reasoning": "one"}`
	s := llmtest.NewServer(t, script(llmtest.Text(plan)))
	cfg := outlineConfig(t, s, "openai", string(combined))
	cfg.Sources, cfg.Task = []string{"setup.mdx", "notes.md"}, "What does Node 16 need?"
	if _, err := orchestrate.Ask(context.Background(), cfg); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	user := plannerRequests(s)[0].Messages[0].Content
	if !strings.Contains(user, "setup.mdx > Node 16 [lines") || !strings.Contains(user, "setup.mdx > Node 18 [lines") {
		t.Errorf("the outline does not read setup.mdx as MDX:\n%s", user)
	}
	got := subagentFor(t, s, "Node 16").Messages[0].Content
	if !strings.Contains(got, "marker-node16") || strings.Contains(got, "marker-node18") || strings.Contains(got, "marker-notes") {
		t.Errorf("the Node 16 slice:\n%s", got)
	}
}
