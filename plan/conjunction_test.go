package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitConjunction(t *testing.T) {
	cases := []struct {
		q    string
		want []string // each part's question; nil when q must stay whole
	}{
		{"What were the risks and the revenue?", []string{"What were the risks?", "What were the revenue?"}},
		{"What was the duration and impact of the outage?", []string{"What was the duration of the outage?", "What was the impact of the outage?"}},
		{"List the owners, deadlines and status of each action item", []string{"List the owners of each action item", "List the deadlines of each action item", "List the status of each action item"}},
		{"What happened during the migration and the rollback?", []string{"What happened during the migration?", "What happened during the rollback?"}},
		{"What do Acme and Globex charge?", []string{"What do Acme charge?", "What do Globex charge?"}},
		{"What did the risks and the revenue show in 2024?", []string{"What did the risks show in 2024?", "What did the revenue show in 2024?"}},
		{"What caused the outage and what should change?", []string{"What caused the outage?", "What should change?"}},
		{"Summarise the incident and list the follow-ups.", []string{"Summarise the incident.", "List the follow-ups."}},
		// Asked together, or one thing with two names: never split.
		{"What are the pros and cons of raising the pool size?", nil},
		{"What are the strengths and weaknesses of the design?", nil},
		{"Compare the per-seat plan and the usage-based plan.", nil},
		{"What is the difference between staging and production?", nil},
		{"How did both the latency and the throughput change?", nil},
		{"Summarise \"Risks and Open Questions\".", nil},
		// Too loose to read safely: two "and"s, a modifier list, a long part.
		{"What were the risks and the revenue and the margin?", nil},
		{"What happened after the deploy and before the rollback?", nil},
		{"What were the risks of the migration, the revenue and the team?", nil},
		{"What is the long and winding history of the old ledger service and the proxy?", nil},
		{"What is X and why?", nil},
		{"What changed?", nil},
		{"and", nil},
	}
	for _, tc := range cases {
		t.Run(tc.q, func(t *testing.T) {
			c, ok := splitConjunction(tc.q)
			var got []string
			if ok {
				for k := range c.parts {
					got = append(got, c.question([]int{k}))
				}
				if whole := c.question(seq(len(c.parts))); !c.clauses && whole == "" {
					t.Errorf("the whole question rebuilt empty")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConjunctionRegroups(t *testing.T) {
	c, ok := splitConjunction("What were the revenue, the margin and the headcount in 2024?")
	if !ok {
		t.Fatal("not split")
	}
	if got, want := c.question([]int{0, 1}), "What were the revenue and the margin in 2024?"; got != want {
		t.Errorf("question(0, 1) = %q, want %q", got, want)
	}
	if got, want := c.question([]int{2}), "What were the headcount in 2024?"; got != want {
		t.Errorf("question(2) = %q, want %q", got, want)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func FuzzSplitConjunction(f *testing.F) {
	for _, s := range []string{
		"What were the risks and the revenue?",
		"List the owners, deadlines and status of each action item",
		"What do Acme and Globex charge?",
		"What caused it and why?",
		"and and",
		", and ,",
		"the and",
		"\xff and \xfe?",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, ok := splitConjunction(q)
		if !ok {
			return
		}
		if len(c.parts) < 2 {
			t.Fatalf("split %q into %d parts", q, len(c.parts))
		}
		for k, p := range c.parts {
			if len(terms(p)) == 0 {
				t.Fatalf("part %d of %q has no content word: %q", k, q, p)
			}
			if sub := c.question([]int{k}); len(terms(sub)) == 0 {
				t.Fatalf("sub-question %d of %q is empty: %q", k, q, sub)
			}
		}
		c.question(seq(len(c.parts)))
	})
}
