package plan

import (
	"slices"
	"strings"
	"testing"
)

// quarterly is a short report with one section per topic, as the planner
// sees it.
const quarterly = `# Quarterly report

## 1. Overview

Acme closed the quarter ahead of plan.

## 2. Financial results

Revenue rose 12% to 4.1 million euros, led by the enterprise tier. Margins
improved by two points.

## 3. Costs

Costs held flat at 3.2 million euros.

## 4. Risks

The main risks are the dependency on one payment gateway, which carries most
of the revenue, and a slowdown in renewals that would cut next year's revenue.
`

// A part whose word also appears in another part's section ("revenue" in
// the risks) once lost its subtask: both parts led to "4. Risks", were
// merged, and the merged question picked only that section.
func TestRetrieveSplitsEveryPartOfAMultiPartTask(t *testing.T) {
	secs := sectionsOf(t, quarterly)
	cases := []struct {
		task string
		want [][]string // each subtask's section pointers, in order
	}{
		{"Summarise the revenue and the risks.", [][]string{{"2. Financial results"}, {"4. Risks"}}},
		{"Summarise the revenue, the costs and the risks.", [][]string{{"2. Financial results"}, {"3. Costs"}, {"4. Risks"}}},
		{"Compare the costs with the risks.", [][]string{{"3. Costs"}, {"4. Risks"}}},
		{"How do the risks compare to the costs?", [][]string{{"4. Risks"}, {"3. Costs"}}},
		{"What are the differences between the costs and the risks?", [][]string{{"3. Costs"}, {"4. Risks"}}},
	}
	for _, c := range cases {
		if p := Retrieve(RetrieveInput{Task: c.task, Sections: secs, Skills: builtinSkills}); p.Validate(Options{}) != nil {
			t.Errorf("%q: invalid plan: %v", c.task, p.Validate(Options{}))
		}
		p := Retrieve(RetrieveInput{Task: c.task, Sections: secs, Skills: builtinSkills})
		var got [][]string
		for _, st := range p.Subtasks {
			got = append(got, st.ContextPointers.Sections)
		}
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%q: subtasks point at %v, want %v", c.task, got, c.want)
		}
	}
}

// The plans of the report: a comparison of its two pricing plans sends each
// plan to its own sub-agent.
func TestRetrieveSplitsAComparison(t *testing.T) {
	secs := loadReport(t)
	p := Retrieve(RetrieveInput{Task: "Compare the per-seat plan with the usage-based plan.", Sections: secs, Skills: builtinSkills})
	var got [][]string
	for _, st := range p.Subtasks {
		got = append(got, st.ContextPointers.Sections)
		if st.Skill != "analytical_comparison" {
			t.Errorf("subtask %q has skill %q, want analytical_comparison", st.Task, st.Skill)
		}
	}
	if want := [][]string{{"Per-Seat Plan"}, {"Usage-Based Plan"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("subtasks point at %v, want %v", got, want)
	}
}

func FuzzSplitComparison(f *testing.F) {
	for _, s := range []string{
		"Compare the costs with the risks.",
		"How does Acme compare to Globex?",
		"What are the differences between X and Y?",
		"cats vs dogs",
		"compare  with ",
		"\xff versus \xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, ok := splitComparison(q)
		if !ok {
			return
		}
		if len(c.parts) != 2 || c.compared == "" {
			t.Fatalf("split %q into %+v", q, c)
		}
		for k, p := range c.parts {
			if len(terms(p)) == 0 || len(terms(c.query(k))) == 0 {
				t.Fatalf("part %d of %q has no content word: %q", k, q, p)
			}
			if sub := c.question([]int{k}); !strings.Contains(sub, p) {
				t.Fatalf("sub-question %d of %q does not name its part: %q", k, q, sub)
			}
		}
		if c.question([]int{0, 1}) != c.compared {
			t.Fatalf("the whole comparison of %q is %q", q, c.question([]int{0, 1}))
		}
	})
}
