package plan_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	golden_ "github.com/baton-dev/baton/internal/golden"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
	"github.com/google/go-cmp/cmp"
)

const outlineDoc = `Vendor review, internal.

# Globex
Globex sells widgets to hospitals.

## Pricing
Per seat: 12 EUR a month.

### Discounts
Volume discounts from 100 seats.

## Notes
Support is slow.

## Notes
Contract ends in 2027.

# Initech
Initech makes TPS reports.

## Pricing
Per use: 0.40 EUR a report.
`

func buildOutline(t *testing.T) *outline.Outline {
	t.Helper()
	o, err := outline.Build([]outline.Source{{Name: "review.md", Doc: slice.Parse([]byte(outlineDoc))}}, tokens.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

var outlineSkills = []plan.SkillInfo{
	{Name: "summarization", Description: "Condense a passage into its gist."},
	{Name: "analytical-comparison", Description: "Compare two or more things along explicit dimensions."},
	{Name: "lookup", Description: "Find one stated fact."},
}

func TestOutlinePlannerPrompt(t *testing.T) {
	o := buildOutline(t)
	task := "Compare the pricing of Globex and Initech, and say when the Globex contract ends."
	system, user := plan.OutlinePlannerPrompt(plan.OutlinePromptInput{Task: "  " + task + "\n", Outline: o.Text(), Skills: outlineSkills, MaxSubtasks: 4})
	golden_.Check(t, filepath.Join("testdata", "planner_outline_mode.golden"), system+"\n---- user ----\n"+user)

	for _, w := range []string{
		"1 to 4 subtasks",
		"outline instead",
		"never use the skill \"self\"",
		`"lookup" when the answer is a direct lookup`,
		"smallest section that holds the fact",
		"copied exactly, character for character, from the outline",
		"- analytical-comparison: Compare",
	} {
		if !strings.Contains(system, w) {
			t.Errorf("system message lacks %q", w)
		}
	}
	if strings.Count(system, "- lookup") != 1 {
		t.Errorf("the lookup skill should be listed once:\n%s", system)
	}
	for _, w := range []string{
		"<outline>\n" + o.Text() + "</outline>",
		"Globex > Notes (2) [lines",
		"Initech > Pricing [lines",
	} {
		if !strings.Contains(user, w) {
			t.Errorf("user message lacks %q:\n%s", w, user)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(strings.SplitN(user, "Task:\n", 2)[1]), "copied from the outline.") || !strings.Contains(user, "Task:\n"+task+"\n") {
		t.Errorf("the task should come last, trimmed:\n%s", user)
	}
	// The document's text is not in the prompt: only the outline's leads.
	if strings.Contains(user, "Volume discounts from 100 seats.\n\n") || strings.Contains(user, "# Globex") {
		t.Errorf("user message carries document text:\n%s", user)
	}
	// With no lookup skill installed the prompt still offers it.
	sys2, _ := plan.OutlinePlannerPrompt(plan.OutlinePromptInput{Task: task, Outline: o.Text()})
	if !strings.Contains(sys2, "- lookup: ") || !strings.Contains(sys2, "1 to 6 subtasks") {
		t.Errorf("system message without skills:\n%s", sys2)
	}
}

func TestOutlinePlanPathPointers(t *testing.T) {
	o := buildOutline(t)
	known := func(p string) bool { _, ok := o.Lookup(p); return ok }
	reply := "```json\n" + `{"subtasks": [
	  {"task": "Compare per-seat and per-use pricing.", "skill": "analytical-comparison",
	   "context_pointers": {"sections": ["Globex > Pricing", "## Initech > Pricing"], "line_ranges": []}, "answer": ""},
	  {"task": "When does the Globex contract end?", "skill": "lookup",
	   "context_pointers": {"sections": ["Globex > Notes (2)"], "line_ranges": [[1, 1]]}, "answer": ""}
	], "reasoning": "one comparison, one lookup"}` + "\n```"
	p, err := plan.Parse(reply, plan.Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := [][]string{{"Globex > Pricing", "Initech > Pricing"}, {"Globex > Notes (2)"}}
	got := [][]string{p.Subtasks[0].ContextPointers.Sections, p.Subtasks[1].ContextPointers.Sections}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if err := plan.CheckOutlinePlan(p, known); err != nil {
		t.Errorf("CheckOutlinePlan: %v", err)
	}
	e, _ := o.Lookup(p.Subtasks[1].ContextPointers.Sections[0])
	if e.Line != 15 || e.EndLine != 17 || !strings.Contains(e.Lead, "2027") {
		t.Errorf("the lookup's section = %+v, want lines 15-17 holding the contract's end", e)
	}
}

func TestCheckOutlinePlan(t *testing.T) {
	o := buildOutline(t)
	known := func(p string) bool { _, ok := o.Lookup(p); return ok }
	reply := `{"subtasks": [
	  {"task": "When does the contract end?", "skill": "self", "answer": "2027"},
	  {"task": "Summarise pricing.", "skill": "summarization", "context_pointers": {"sections": ["Pricing", "Globex > Discounts", "Globex > Pricing > Discounts"]}}
	], "reasoning": "x"}`
	p, err := plan.Parse(reply, plan.Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	err = plan.CheckOutlinePlan(p, known)
	var ve *plan.ValidationError
	if !errors.Is(err, plan.ErrInvalidPlan) || !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	want := []string{
		`subtask 1: skill is "self", but the document was not read; give it the skill "lookup" and point it at the section that holds the answer`,
		`subtask 2: section "Pricing" is not a path in the outline; copy the whole path from the outline`,
		`subtask 2: section "Globex > Discounts" is not a path in the outline; copy the whole path from the outline`,
	}
	if diff := cmp.Diff(want, ve.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !strings.Contains(plan.RepairPrompt(reply, err), "copy the whole path") {
		t.Error("the repair prompt does not quote the problems")
	}
	if err := plan.CheckOutlinePlan(nil, known); !errors.Is(err, plan.ErrInvalidPlan) {
		t.Errorf("nil plan: err = %v", err)
	}
}

func TestPathsToLines(t *testing.T) {
	o := buildOutline(t)
	lookup := func(p string) (int, int, bool) {
		e, ok := o.Lookup(p)
		return e.Line, e.EndLine, ok
	}
	p := &plan.Plan{Subtasks: []plan.Subtask{
		{Task: "a", Skill: "lookup", ContextPointers: plan.Pointers{Sections: []string{"Globex > Notes (2)", "Nope"}, LineRanges: [][2]int{{1, 2}}}},
		{Task: "b", Skill: "summarization", ContextPointers: plan.Pointers{Sections: []string{"Globex > Pricing", "Globex > Pricing", "Nope"}}},
		{Task: "c", Skill: "summarization"},
	}}
	unknown := plan.PathsToLines(p, lookup)
	if diff := cmp.Diff([]string{"Nope"}, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	want := []plan.Pointers{
		{Sections: []string{"Nope"}, LineRanges: [][2]int{{1, 2}, {15, 17}}},
		{Sections: []string{"Nope"}, LineRanges: [][2]int{{6, 11}}},
		{},
	}
	for i, st := range p.Subtasks {
		if diff := cmp.Diff(want[i], st.ContextPointers); diff != "" {
			t.Errorf("subtask %d pointers (-want +got):\n%s", i+1, diff)
		}
	}
	// The rewritten plan is still valid, and slices the named lines.
	if err := p.Validate(plan.Options{Lines: 22}); err != nil {
		t.Errorf("Validate after PathsToLines: %v", err)
	}
	doc := slice.Parse([]byte(outlineDoc))
	lines := doc.Lines()
	if got := strings.Join(lines[14:17], "\n"); !strings.Contains(got, "## Notes") || !strings.Contains(got, "2027") || strings.Contains(got, "slow") {
		t.Errorf("lines 15-17 are not the second Notes section:\n%s", got)
	}
}
