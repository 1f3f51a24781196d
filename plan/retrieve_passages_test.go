package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// runIn is text with no headings cut into passages: one run-in topic per
// passage, as a biography on one line reads.
func runIn() []PassageText {
	topics := []string{
		"Early life. He was born in Jerez in 1919 and moved to Madrid with his mother.",
		"Education. He studied architecture in Madrid and drew for the magazine.",
		"Career. His paradors were built in old castles across the country.",
		"Honours. He was elected to the Royal Academy of Fine Arts in 1997.",
		"Death. He died in Madrid in 2010 at the age of ninety.",
	}
	var ps []PassageText
	for i, t := range topics {
		filler := strings.Repeat("The work went on through the years as the plans were drawn. ", 5)
		ps = append(ps, PassageText{ID: fmt.Sprintf("p%d", i+1), Text: t + " " + filler})
	}
	return ps
}

func TestRetrievePointsAtPassagesWithoutHeadings(t *testing.T) {
	cases := []struct {
		task string
		want [][]string
	}{
		{"Where was he born?", [][]string{{"p1"}}},
		{"When was he elected to the Royal Academy?", [][]string{{"p4"}}},
		{"Summarise his education and his honours.", [][]string{{"p2"}, {"p4"}}},
	}
	for _, c := range cases {
		p := Retrieve(RetrieveInput{Task: c.task, Passages: runIn(), Skills: builtinSkills})
		if err := p.Validate(Options{}); err != nil {
			t.Fatalf("%q: %v", c.task, err)
		}
		var got [][]string
		for _, st := range p.Subtasks {
			got = append(got, st.ContextPointers.Passages)
		}
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%q: passages %v, want %v (%s)", c.task, got, c.want, p.Reasoning)
		}
	}
}

// A sub-question that matches no section is sent its passages, not the
// whole document.
func TestRetrieveFallsBackToPassagesNotTheDocument(t *testing.T) {
	secs := []SectionText{{Title: "Notes", Level: 1, Line: 1, EndLine: 5, Text: "# Notes\nnothing here"}}
	p := Retrieve(RetrieveInput{Task: "When was he elected to the Royal Academy?", Sections: secs, Passages: runIn()})
	if got := p.Subtasks[0].ContextPointers; !slices.Equal(got.Passages, []string{"p4"}) || len(got.Sections) != 0 {
		t.Fatalf("pointers %+v, want passage p4", got)
	}
}

func TestPassagePointersJoinRuns(t *testing.T) {
	ix := newPassageIndex(runIn())
	var ps Pointers
	ix.point(&ps, []int{0, 1, 2, 4})
	if want := []string{"p1-p3", "p5"}; !slices.Equal(ps.Passages, want) {
		t.Fatalf("got %v, want %v", ps.Passages, want)
	}
}

// The full planner sees a document with no headings passage by passage,
// each after its id, and is told to point at passages.
func TestPlannerPromptShowsPassages(t *testing.T) {
	ps := runIn()
	var doc strings.Builder
	for _, p := range ps {
		doc.WriteString(p.Text)
	}
	sys, user := PlannerPrompt(PromptInput{Task: "Where was he born?", Context: doc.String(), Passages: ps})
	if !strings.Contains(sys, `"passages"`) || !strings.Contains(user, "point into it with passages") {
		t.Fatalf("prompt does not offer passages:\n%s\n%s", sys, user)
	}
	for _, p := range ps {
		if !strings.Contains(user, "["+p.ID+"] "+strings.TrimSpace(p.Text)+"\n") {
			t.Errorf("passage %s is not marked in the prompt", p.ID)
		}
	}
	if strings.Contains(user, "1| ") {
		t.Errorf("lines are numbered as well as passages:\n%s", user)
	}
	// With headings the document goes as it is.
	_, user = PlannerPrompt(PromptInput{Task: "x", Context: doc.String(), Passages: ps, Outline: []OutlineEntry{{Level: 1, Title: "A", Line: 1, EndLine: 1}}})
	if strings.Contains(user, "[p1]") {
		t.Error("a document with headings is shown as passages")
	}
}
