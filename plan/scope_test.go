package plan

import (
	"strings"
	"testing"
)

func TestParseScope(t *testing.T) {
	cases := []struct {
		name, scope, want string
		warn              string
	}{
		{"all", `"all"`, ScopeAll, ""},
		{"capitalised", `"ALL"`, ScopeAll, ""},
		{"whole document", `"whole document"`, ScopeAll, ""},
		{"empty", `""`, "", ""},
		{"null", `null`, "", ""},
		{"slice", `"slice"`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"subtasks": [{"task": "Count the incidents", "skill": "fact-extraction", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "", "scope": ` + tc.scope + `}], "reasoning": "r"}`
			p, err := Parse(raw, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := p.Subtasks[0].Scope; got != tc.want {
				t.Errorf("scope = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseScopeProblems(t *testing.T) {
	raw := `{"subtasks": [{"task": "t", "skill": "fact-extraction", "scope": "some"}, {"task": "u", "skill": "x", "scope": ["all"]}], "reasoning": "r"}`
	_, err := Parse(raw, Options{})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`subtask 1: scope is "some"`, "subtask 2: scope is not a string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A self subtask has nothing to run over the parts; pointers next to scope
// all are kept but reported as unused.
func TestParseScopeRepairs(t *testing.T) {
	raw := `{"subtasks": [
		{"task": "t", "skill": "self", "answer": "42", "scope": "all"},
		{"task": "u", "skill": "fact-extraction", "context_pointers": {"sections": ["Risks"]}, "scope": "all"}], "reasoning": "r"}`
	p, err := Parse(raw, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if p.Subtasks[0].Scope != "" || p.Subtasks[1].Scope != ScopeAll {
		t.Errorf("scopes = %q, %q", p.Subtasks[0].Scope, p.Subtasks[1].Scope)
	}
	w := strings.Join(p.Warnings, "\n")
	if !strings.Contains(w, "subtask 1: scope \"all\" dropped") || !strings.Contains(w, "subtask 2: scope is \"all\", so the subtask runs over the whole document") {
		t.Errorf("warnings = %q", p.Warnings)
	}
}

func TestValidateScope(t *testing.T) {
	p := &Plan{Subtasks: []Subtask{{Task: "t", Skill: "self", Answer: "a", Scope: ScopeAll}, {Task: "u", Skill: "x", Scope: "most"}}}
	err := p.Validate(Options{})
	if err == nil || !strings.Contains(err.Error(), `subtask 1: scope is "all" but skill is "self"`) || !strings.Contains(err.Error(), `subtask 2: scope is "most"`) {
		t.Errorf("Validate = %v", err)
	}
}

func TestNeedsEveryPart(t *testing.T) {
	yes := []string{
		"How many times is the Osaka site mentioned?",
		"List every risk the report names.",
		"Which sections mention the outage?",
		"How many incidents were reported across all documents?",
		"How many sections discuss pricing?",
		"Count the planted markers.",
		"How often does the word latency appear?",
		"Name all vendors.",
	}
	no := []string{
		"How many weeks of spare parts does the Osaka site hold?",
		"How many customers were affected by the incident?",
		"What were the risks and the revenue?",
		"Summarise the pricing section.",
		"Which vendor is cheaper?",
		"List the main risks.",
	}
	for _, q := range yes {
		if !NeedsEveryPart(q) {
			t.Errorf("NeedsEveryPart(%q) = false, want true", q)
		}
	}
	for _, q := range no {
		if NeedsEveryPart(q) {
			t.Errorf("NeedsEveryPart(%q) = true, want false", q)
		}
	}
}

// The retrieval planner gives a count across the document scope all and no
// pointers, and keeps slicing the other parts of the task.
func TestRetrieveScopeAll(t *testing.T) {
	secs := []SectionText{
		{Title: "Risks", Path: []string{"Risks"}, Level: 2, Line: 1, EndLine: 3, Text: "## Risks\nSupply risk and currency risk.\n"},
		{Title: "Revenue", Path: []string{"Revenue"}, Level: 2, Line: 4, EndLine: 6, Text: "## Revenue\nRevenue rose to 12 million.\n"},
	}
	p := Retrieve(RetrieveInput{Task: "What was the revenue? How many times is risk mentioned in total?", Sections: secs})
	if len(p.Subtasks) != 2 {
		t.Fatalf("subtasks = %+v", p.Subtasks)
	}
	if st := p.Subtasks[0]; st.Scope != "" || len(st.ContextPointers.Sections) != 1 || st.ContextPointers.Sections[0] != "Revenue" {
		t.Errorf("subtask 1 = %+v, want the Revenue slice", st)
	}
	if st := p.Subtasks[1]; st.Scope != ScopeAll || !st.ContextPointers.IsEmpty() {
		t.Errorf("subtask 2 = %+v, want scope all without pointers", st)
	}
	if err := p.Validate(Options{}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
