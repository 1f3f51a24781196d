package plan_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// sectionsFromSlice builds the planner's input from the slice package's
// outline, the way orchestrate does, so these tests see what a real run
// sees and cut the slices a real run would cut.
func sectionsFromSlice(doc *slice.Document) []plan.SectionText {
	lines := doc.Lines()
	var secs []plan.SectionText
	for _, h := range doc.Outline() {
		body := ""
		if h.Line >= 1 && h.EndLine <= len(lines) && h.Line <= h.EndLine {
			body = strings.Join(lines[h.Line-1:h.EndLine], "\n")
		}
		secs = append(secs, plan.SectionText{Title: h.Title, Path: h.Path, Level: h.Level, Line: h.Line, EndLine: h.EndLine, Text: body})
	}
	return secs
}

// planAndCut runs the retrieval planner over src and cuts each subtask's
// slice with the assembler.
func planAndCut(t *testing.T, src, task string) (*plan.Plan, []slice.Result) {
	t.Helper()
	doc := slice.Parse([]byte(src))
	p := plan.Retrieve(plan.RetrieveInput{Task: task, Sections: sectionsFromSlice(doc)})
	if err := p.Validate(plan.Options{Lines: doc.NumLines()}); err != nil {
		t.Fatalf("retrieved plan is invalid: %v", err)
	}
	var res []slice.Result
	for _, st := range p.Subtasks {
		r := doc.Extract(slice.Pointers{Sections: st.ContextPointers.Sections, LineRanges: st.ContextPointers.LineRanges})
		if len(r.Unmatched) > 0 || r.Fallback {
			t.Errorf("subtask %q: pointers %q: unmatched %q, fallback %v", st.Task, st.ContextPointers.Sections, r.Unmatched, r.Fallback)
		}
		for _, w := range r.Warnings {
			t.Errorf("subtask %q: assembler warned: %s", st.Task, w)
		}
		res = append(res, r)
	}
	return p, res
}

const companyDoc = `# Acme annual review

## Overview

Acme makes industrial valves and sells them in Europe and Asia.

## Risks

Supply of forged steel depends on a single mill; a strike there would stop production.
Currency swings in the yen hurt margins.

## Revenue

Turnover reached 41 million euros in 2024, up 12 percent on the year before.

## Team

The company employs 210 people across three plants.

## Warehouses

Stock is kept in Rotterdam and in Osaka. The Osaka site holds six weeks of spare parts.
`

func TestRetrieveSplitsRisksAndRevenue(t *testing.T) {
	p, res := planAndCut(t, companyDoc, "What were the risks and the revenue?")
	if len(p.Subtasks) != 2 {
		t.Fatalf("got %d subtasks, want 2: %+v", len(p.Subtasks), p.Subtasks)
	}
	wants := []string{"single mill", "41 million euros"}
	for i, want := range wants {
		if !strings.Contains(res[i].Text, want) {
			t.Errorf("subtask %d (%q, pointers %q): slice lacks %q:\n%s", i+1, p.Subtasks[i].Task, p.Subtasks[i].ContextPointers.Sections, want, res[i].Text)
		}
	}
	if strings.Contains(res[0].Text, "41 million") || strings.Contains(res[1].Text, "single mill") {
		t.Errorf("each slice should hold only its own section: %q / %q", p.Subtasks[0].ContextPointers.Sections, p.Subtasks[1].ContextPointers.Sections)
	}
}

func TestRetrieveFindsAnswerInBodyOnly(t *testing.T) {
	// No heading says "spare parts" or "Osaka": only the body of
	// Warehouses does.
	p, res := planAndCut(t, companyDoc, "How many weeks of spare parts does the Osaka site hold?")
	if len(p.Subtasks) != 1 {
		t.Fatalf("got %d subtasks, want 1", len(p.Subtasks))
	}
	if got := p.Subtasks[0].ContextPointers.Sections; len(got) == 0 || got[0] != "Warehouses" {
		t.Errorf("sections = %q, want Warehouses first", got)
	}
	if !strings.Contains(res[0].Text, "six weeks") {
		t.Errorf("slice lacks the answer:\n%s", res[0].Text)
	}
}

const vendorsDoc = `# Vendor review

## Acme

Acme sells valves.

### Pricing

Acme charges 40 euros per valve.

### Support

Acme answers within a day.

## Globex

Globex sells pumps.

### Pricing

Globex charges 95 euros per pump.

### Support

Globex answers within a week.
`

func TestRetrieveDuplicateTitlesGetUniquePointers(t *testing.T) {
	p, res := planAndCut(t, vendorsDoc, "What is Acme's pricing? What is Globex's pricing?")
	if len(p.Subtasks) != 2 {
		t.Fatalf("got %d subtasks, want 2: %+v", len(p.Subtasks), p.Subtasks)
	}
	for i, want := range []string{"40 euros", "95 euros"} {
		if !strings.Contains(res[i].Text, want) {
			t.Errorf("subtask %d (pointers %q): slice lacks %q:\n%s", i+1, p.Subtasks[i].ContextPointers.Sections, want, res[i].Text)
		}
	}
	for _, st := range p.Subtasks {
		if slices.Contains(st.ContextPointers.Sections, "Pricing") {
			t.Errorf("subtask %q points at the bare, ambiguous title: %q", st.Task, st.ContextPointers.Sections)
		}
	}
}

func TestRetrieveReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../examples/incident-report.md")
	if err != nil {
		t.Fatal(err)
	}
	task := "What was the duration and impact of the outage? What caused the retry storm? Which action items address the root cause?"
	p, res := planAndCut(t, string(b), task)
	// Each sub-question, the section that must lead its pointers, and a
	// fact of the answer its slice must hold.
	want := []struct{ task, first, fact string }{
		{"What was the duration of the outage?", "1. Summary", "3 hours 42 minutes"},
		{"What was the impact of the outage?", "6. Impact", "Affected merchants"},
		{"What caused the retry storm?", "4.3 Retry storm", "retry"},
		{"Which action items address the root cause?", "9. Action items", "Action items"},
	}
	if len(p.Subtasks) != len(want) {
		t.Fatalf("got %d subtasks, want %d: %+v", len(p.Subtasks), len(want), p.Subtasks)
	}
	for i, w := range want {
		st := p.Subtasks[i]
		if st.Task != w.task {
			t.Errorf("subtask %d task = %q, want %q", i+1, st.Task, w.task)
		}
		if got := st.ContextPointers.Sections; len(got) == 0 || got[0] != w.first {
			t.Errorf("subtask %d sections = %q, want %q first", i+1, got, w.first)
		}
		if !strings.Contains(res[i].Text, w.fact) {
			t.Errorf("subtask %d slice lacks %q", i+1, w.fact)
		}
		if len(res[i].Text) > len(b)/4 {
			t.Errorf("subtask %d slice is %d bytes of the document's %d: not a slice", i+1, len(res[i].Text), len(b))
		}
	}
}

func TestRetrieveKeepsOneThingWhole(t *testing.T) {
	cases := []struct{ name, task string }{
		// A fixed pair is one question, whatever sections exist.
		{"idiom", "What are the pros and cons of the Osaka site?"},
		// Both parts lead to the Revenue section: one subtask serves them.
		{"same section", "What were the turnover and the growth in 2024?"},
		// A part that alone finds nothing would go out with the whole
		// document; the question stays whole instead.
		{"part finds nothing", "What were the risks and the zeppelins?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := planAndCut(t, companyDoc, tc.task)
			if len(p.Subtasks) != 1 || p.Subtasks[0].Task != tc.task {
				t.Errorf("subtasks = %+v, want the task whole", p.Subtasks)
			}
		})
	}
}

func TestRetrieveSplitsAList(t *testing.T) {
	p, res := planAndCut(t, companyDoc, "What were the risks, the revenue and the warehouses?")
	wants := []string{"single mill", "41 million", "Rotterdam"}
	if len(p.Subtasks) != len(wants) {
		t.Fatalf("got %d subtasks, want %d: %+v", len(p.Subtasks), len(wants), p.Subtasks)
	}
	for i, w := range wants {
		if !strings.Contains(res[i].Text, w) {
			t.Errorf("subtask %d (%q -> %q) slice lacks %q", i+1, p.Subtasks[i].Task, p.Subtasks[i].ContextPointers.Sections, w)
		}
	}
	// Within max: the list stays one subtask when there is no room.
	doc := slice.Parse([]byte(companyDoc))
	p = plan.Retrieve(plan.RetrieveInput{Task: "What were the risks, the revenue and the warehouses?", Sections: sectionsFromSlice(doc), MaxSubtasks: 2})
	if len(p.Subtasks) != 1 {
		t.Errorf("with max 2 got %d subtasks, want the task whole", len(p.Subtasks))
	}
}

func TestRetrieveUniquePointersResolve(t *testing.T) {
	// Repeated titles at several depths, under an empty heading and under
	// parents that repeat too: every pointer must resolve, without a
	// warning, to the section that holds its answer.
	cases := []struct{ doc, task, fact string }{
		{dupDoc, "What does Globex charge for pricing?", "95 euros"},
		{dupDoc, "What is Acme pricing?", "40 euros"},
		{dupDoc, "What is the Asian retail pricing?", "30 rupees"},
		{dupDoc, "What is the European retail pricing in francs?", "12 francs"},
		// The empty heading is the only ancestor that tells these apart;
		// it cannot name a path, so a line range must.
		{emptyParentDoc, "What is the monthly base fee?", "7 dollars"},
		{emptyParentDoc, "What is the surcharge?", "9 dollars"},
		// A '>' in a title would read as a path separator.
		{arrowDoc, "What was the 2023 ratio?", "ratio was 1.4"},
		{arrowDoc, "What was the 2024 ratio?", "ratio was 2.1"},
	}
	for _, tc := range cases {
		p, res := planAndCut(t, tc.doc, tc.task)
		if !strings.Contains(res[0].Text, tc.fact) {
			t.Errorf("%q: pointers %+v: slice lacks %q:\n%s", tc.task, p.Subtasks[0].ContextPointers, tc.fact, res[0].Text)
		}
	}
}

const dupDoc = "#\n\n## Acme\n\n### Pricing\n\nAcme charges 40 euros.\n\n## Globex\n\n### Pricing\n\nGlobex charges 95 euros.\n\n" +
	"# Europe\n\n## Retail\n\n### Pricing\n\nEuropean retail pays 12 francs.\n\n# Asia\n\n## Retail\n\n### Pricing\n\nAsian retail pays 30 rupees.\n"

const emptyParentDoc = "#\n\n## Pricing\n\nThe base fee is 7 dollars, billed monthly.\n\n# Other\n\n## Pricing\n\nThe surcharge is 9 dollars.\n"

const arrowDoc = "# 2023\n\n## Cost > Value\n\nThe ratio was 1.4 in 2023.\n\n# 2024\n\n## Cost > Value\n\nThe ratio was 2.1 in 2024.\n"
