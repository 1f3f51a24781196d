package plan

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sectionsOf cuts a markdown document into sections the way the assembler
// does (ATX headings only; a section runs to the next heading of the same or
// higher level), so retrieval is tested on realistic input without importing
// the slice package.
func sectionsOf(t testing.TB, doc string) []SectionText {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	var secs []SectionText
	var path []string
	for i, l := range lines {
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(l[level:], " ") {
			continue
		}
		title := strings.TrimSpace(l[level:])
		path = append(path[:min(level-1, len(path))], title)
		secs = append(secs, SectionText{Title: title, Path: append([]string(nil), path...), Level: level, Line: i + 1, EndLine: len(lines)})
	}
	for k := range secs {
		for m := k + 1; m < len(secs); m++ {
			if secs[m].Level <= secs[k].Level {
				secs[k].EndLine = secs[m].Line - 1
				break
			}
		}
		secs[k].Text = strings.Join(lines[secs[k].Line-1:secs[k].EndLine], "\n")
	}
	return secs
}

func loadReport(t testing.TB) []SectionText {
	t.Helper()
	b, err := os.ReadFile("testdata/report.md")
	if err != nil {
		t.Fatal(err)
	}
	return sectionsOf(t, string(b))
}

var builtinSkills = []SkillInfo{
	{Name: "fact_extraction"}, {Name: "summarization"}, {Name: "classification"},
	{Name: "analytical_comparison"}, {Name: "causal_reasoning"}, {Name: "critique"},
	{Name: "gap_analysis"}, {Name: "structured_synthesis"},
}

func TestRetrieveRanksTheRightSection(t *testing.T) {
	secs := loadReport(t)
	cases := []struct {
		question  string
		wantFirst string
		wantSkill string
	}{
		{"Why did the March outage happen?", "Root Cause", "causal_reasoning"},
		{"How many customers were affected by the incident?", "Impact", "fact_extraction"},
		{"How much did p99 latency improve?", "Latency", "fact_extraction"},
		{"Summarise the storage layer design.", "Storage Layer", "summarization"},
		{"Who leads the team?", "Team", "fact_extraction"},
		{"What is missing from the risk register?", "Risks and Open Questions", "gap_analysis"},
		{"How long are invoices cached?", "Caching", "fact_extraction"},
		{"Assess whether the throughput limit is sound.", "Throughput", "critique"},
		{"What do the recommendations propose overall?", "Recommendations", "structured_synthesis"},
	}
	for _, tc := range cases {
		t.Run(tc.question, func(t *testing.T) {
			p := Retrieve(RetrieveInput{Task: tc.question, Sections: secs, Skills: builtinSkills})
			if err := p.Validate(Options{}); err != nil {
				t.Fatalf("retrieved plan is invalid: %v", err)
			}
			if len(p.Subtasks) != 1 {
				t.Fatalf("got %d subtasks, want 1: %+v", len(p.Subtasks), p.Subtasks)
			}
			st := p.Subtasks[0]
			// wantFirst lists, separated by "|", the sections that must lead
			// the pointers in that order.
			want := strings.Split(tc.wantFirst, "|")
			if got := st.ContextPointers.Sections; len(got) < len(want) || !cmp.Equal(got[:len(want)], want) {
				t.Errorf("sections = %q, want %q first", got, want)
			}
			if len(st.ContextPointers.Sections) > maxPerSubtask {
				t.Errorf("got %d sections, want at most %d", len(st.ContextPointers.Sections), maxPerSubtask)
			}
			if st.Skill != tc.wantSkill {
				t.Errorf("skill = %q, want %q", st.Skill, tc.wantSkill)
			}
			if st.IsSelf() || st.Answer != "" {
				t.Errorf("retrieval produced a self answer: %+v", st)
			}
		})
	}
}

func TestRetrieveMultiQuestionTask(t *testing.T) {
	secs := loadReport(t)
	task := "Answer the following:\n1. Who leads the Halyard team?\n2. Why did the March incident happen?\n3. Compare the per-seat and usage-based pricing plans."
	p := Retrieve(RetrieveInput{Task: task, Sections: secs, Skills: builtinSkills, MaxSubtasks: 6})
	var got [][2]string
	for _, st := range p.Subtasks {
		first := ""
		if len(st.ContextPointers.Sections) > 0 {
			first = st.ContextPointers.Sections[0]
		}
		got = append(got, [2]string{st.Skill, first})
	}
	want := [][2]string{
		{"fact_extraction", "Team"},
		{"causal_reasoning", "Root Cause"},
		{"analytical_comparison", "Per-Seat Plan"},
		{"analytical_comparison", "Usage-Based Plan"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(skill, first section) mismatch (-want +got):\n%s", diff)
	}
	// A comparison is one subtask per side, each on its own plan.
	for i, want := range []string{"Per-Seat Plan", "Usage-Based Plan"} {
		if got := p.Subtasks[2+i].ContextPointers.Sections; !cmp.Equal(got, []string{want}) {
			t.Errorf("comparison side %d sections = %q, want %q", i+1, got, want)
		}
	}
	if !strings.Contains(p.Reasoning, "without a model") {
		t.Errorf("reasoning %q does not say the plan was built without a model", p.Reasoning)
	}
	// Deterministic: the same input gives the same plan.
	again := Retrieve(RetrieveInput{Task: task, Sections: secs, Skills: builtinSkills, MaxSubtasks: 6})
	if diff := cmp.Diff(p, again); diff != "" {
		t.Errorf("Retrieve is not deterministic (-first +second):\n%s", diff)
	}
}

func TestRetrieveNoMatchHasNoPointers(t *testing.T) {
	p := Retrieve(RetrieveInput{Task: "What is the airspeed velocity of an unladen swallow?", Sections: loadReport(t), Skills: builtinSkills})
	if got := p.Subtasks[0].ContextPointers; !got.IsEmpty() {
		t.Errorf("pointers = %+v, want none", got)
	}
	if !strings.Contains(p.Reasoning, "matched no section") {
		t.Errorf("reasoning %q does not report the miss", p.Reasoning)
	}
	// No sections at all must not panic or point anywhere.
	p = Retrieve(RetrieveInput{Task: "Anything?"})
	if len(p.Subtasks) != 1 || !p.Subtasks[0].ContextPointers.IsEmpty() || p.Subtasks[0].Skill != "fact-extraction" {
		t.Errorf("plan over no sections = %+v", p.Subtasks)
	}
}

func TestRetrievePrefersLeafOverParent(t *testing.T) {
	// Path-only sections (no line numbers): the parent's text contains the
	// leaf's, so it matches as well; the leaf must still win and the parent
	// must not be listed beside it.
	leafText := "The refund window is thirty days from purchase."
	secs := []SectionText{
		{Title: "Policies", Path: []string{"Policies"}, Level: 1, Text: "Shipping is free over fifty euros.\n" + leafText},
		{Title: "Refunds", Path: []string{"Policies", "Refunds"}, Level: 2, Text: leafText},
		{Title: "Contact", Path: []string{"Contact"}, Level: 1, Text: "Write to the support desk."},
	}
	p := Retrieve(RetrieveInput{Task: "How long is the refund window?", Sections: secs})
	if got := p.Subtasks[0].ContextPointers.Sections; !cmp.Equal(got, []string{"Refunds"}) {
		t.Errorf("sections = %q, want [Refunds]", got)
	}
}

func TestSplitTask(t *testing.T) {
	cases := []struct {
		task string
		max  int
		want []string
	}{
		{"What is the revenue?", 6, []string{"What is the revenue?"}},
		{"What is the revenue? Why did it fall?", 6, []string{"What is the revenue?", "Why did it fall?"}},
		{"Compare cost and speed of the two plans.", 6, []string{"Compare cost and speed of the two plans."}},
		{"List the risks; rank them by impact", 6, []string{"List the risks", "rank them by impact"}},
		{"Summarise the incident and also list the follow-ups.", 6, []string{"Summarise the incident", "list the follow-ups."}},
		{"Answer these:\n1. Who leads?\n2. When was launch?\n- Where is it hosted?", 6, []string{"Who leads?", "When was launch?", "Where is it hosted?"}},
		{"Please do (1) revenue by region (2) churn by plan", 6, []string{"revenue by region", "churn by plan"}},
		{"Explain the figure, e.g. the 3.5 ms median.", 6, []string{"Explain the figure, e.g. the 3.5 ms median."}},
		{"X? Y? Z? W?", 2, []string{"X?", "Y? Z? W?"}},
		{"   ", 6, []string{""}},
		{"The? And?", 6, []string{"The? And?"}},
	}
	for _, tc := range cases {
		t.Run(tc.task, func(t *testing.T) {
			got := SplitTask(tc.task, tc.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SplitTask mismatch (-want +got):\n%s", diff)
			}
			if len(got) > tc.max {
				t.Errorf("got %d pieces, max %d", len(got), tc.max)
			}
		})
	}
}

func TestChooseSkill(t *testing.T) {
	cases := []struct {
		q      string
		skills []SkillInfo
		want   string
	}{
		{"How does A differ from B?", builtinSkills, "analytical_comparison"},
		{"A vs B on cost", builtinSkills, "analytical_comparison"},
		{"What was the impact on sales?", builtinSkills, "causal_reasoning"},
		{"Give an overview of the design", builtinSkills, "summarization"},
		{"Which type of incident was it?", builtinSkills, "classification"},
		{"Categorise the tickets", builtinSkills, "classification"},
		{"Evaluate the migration plan", builtinSkills, "critique"},
		{"What does the policy omit?", builtinSkills, "gap_analysis"},
		{"Recommend a next step", builtinSkills, "structured_synthesis"},
		{"Plan the rollout from these findings", builtinSkills, "structured_synthesis"},
		{"Draft a plan for the migration", builtinSkills, "structured_synthesis"},
		{"What does the per-seat plan cost?", builtinSkills, "fact_extraction"},
		{"What is the median latency?", builtinSkills, "fact_extraction"},
		{"Compare A and B", []SkillInfo{{Name: "analytical-comparison"}}, "analytical-comparison"},
		{"Compare A and B", []SkillInfo{{Name: "Analytical_Comparison"}}, "Analytical_Comparison"},
		{"Compare A and B", []SkillInfo{{Name: "house-style"}, {Name: "other"}}, "house-style"},
		{"Compare A and B", nil, "analytical-comparison"},
		{"Is this effective?", nil, "fact-extraction"}, // "effective" is not the cue "effect"
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.q, tc.skills), func(t *testing.T) {
			if got := chooseSkill(tc.q, tc.skills); got != tc.want {
				t.Errorf("chooseSkill(%q) = %q, want %q", tc.q, got, tc.want)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	cases := []struct{ in, want string }{
		{"The Latencies were improving!", "latency improv"},
		{"Policies, classes and boxes", "policy class box"},
		{"p99 is 310ms", "p99 310m"},
		{"cause caused causes", "caus caus caus"},
		{"change changed changes changing", "chang chang chang chang"},
	}
	for _, tc := range cases {
		if got := strings.Join(terms(tc.in), " "); got != tc.want {
			t.Errorf("terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRetrieveOverviewRequestIsNotATopic(t *testing.T) {
	p := Retrieve(RetrieveInput{Task: "Give an overview of the pricing.", Sections: loadReport(t), Skills: builtinSkills})
	st := p.Subtasks[0]
	if st.Skill != "summarization" {
		t.Errorf("skill = %q, want summarization", st.Skill)
	}
	// The question is about Pricing as a whole: its subsections match only
	// through their heading path, so none of them may stand in for it.
	if got := st.ContextPointers.Sections; len(got) == 0 || got[0] != "Pricing" || slices.Contains(got, "Overview") {
		t.Errorf("sections = %q, want Pricing first and not the Overview", got)
	}
	p = Retrieve(RetrieveInput{Task: "What does the report say about performance?", Sections: loadReport(t)})
	if got := p.Subtasks[0].ContextPointers.Sections; len(got) == 0 || got[0] != "Performance" {
		t.Errorf("sections = %q, want Performance first", got)
	}
}

func TestRetrieveSkipsUnnamedAndRepeatedTitles(t *testing.T) {
	secs := []SectionText{
		{Title: "", Level: 0, Line: 1, EndLine: 2, Text: "Refund refund refund window."},
		{Title: "Refunds", Path: []string{"Shop A", "Refunds"}, Level: 2, Line: 3, EndLine: 5, Text: "The refund window is thirty days."},
		{Title: "Refunds", Path: []string{"Shop B", "Refunds"}, Level: 2, Line: 6, EndLine: 8, Text: "The refund window is fourteen days."},
		{Title: "Shipping", Path: []string{"Shipping"}, Level: 1, Line: 9, EndLine: 10, Text: "Parcels leave within two days."},
		{Title: "Contact", Path: []string{"Contact"}, Level: 1, Line: 11, EndLine: 12, Text: "Write to the support desk."},
		{Title: "Privacy", Path: []string{"Privacy"}, Level: 1, Line: 13, EndLine: 14, Text: "Data is kept for one year."},
	}
	p := Retrieve(RetrieveInput{Task: "How long is the refund window?", Sections: secs})
	// Both shops answer the question; each is named by its parent, since
	// a bare "Refunds" would resolve to the first shop's section only.
	if got := p.Subtasks[0].ContextPointers.Sections; !cmp.Equal(got, []string{"Shop A > Refunds", "Shop B > Refunds"}) {
		t.Errorf("sections = %q, want both shops' Refunds by path", got)
	}
	if err := p.Validate(Options{}); err != nil {
		t.Errorf("retrieved plan is invalid: %v", err)
	}
}

func FuzzSplitTask(f *testing.F) {
	for _, s := range []string{
		"What is X? Why Y?",
		"Answer these:\n1. Who?\n2. When?\n- Where?",
		"a; b and also c",
		"(1) one (2) two 3) three",
		"e.g. 3.5 ms...",
		"",
		"\xff\xfe?",
	} {
		f.Add(s, 3)
	}
	secs := []SectionText{{Title: "Who", Path: []string{"Who"}, Level: 1, Text: "who when where"}, {Title: "When", Level: 2, Text: "when"}}
	f.Fuzz(func(t *testing.T, task string, max int) {
		max = max%10 + 1
		if max <= 0 {
			max += 10
		}
		got := SplitTask(task, max)
		if len(got) < 1 || len(got) > max {
			t.Fatalf("SplitTask gave %d pieces, want 1..%d", len(got), max)
		}
		p := Retrieve(RetrieveInput{Task: task, Sections: secs, MaxSubtasks: max})
		// Retrieve may split a piece further by topic, never past max.
		if len(p.Subtasks) < len(got) || len(p.Subtasks) > max {
			t.Fatalf("Retrieve gave %d subtasks, SplitTask %d pieces, max %d", len(p.Subtasks), len(got), max)
		}
		for _, st := range p.Subtasks {
			if st.IsSelf() {
				t.Fatal("Retrieve produced a self subtask")
			}
		}
	})
}
