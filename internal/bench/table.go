package bench

import (
	"fmt"
	"io"
	"strings"
)

// Table is one printed result: a markdown table with a heading and notes.
// The same text goes to the terminal and into BENCHMARKS.md.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// Section is the output of one benchmark: its tables and a verdict per
// acceptance target.
type Section struct {
	Title   string
	Intro   string
	Tables  []Table
	Targets []Target
	Notes   []string
}

// Target is one acceptance criterion and whether the run met it.
type Target struct {
	Name string
	Want string
	Got  string
	Met  bool
	Why  string // when not met: the reason, from the figures
	// Fail says how the target could have been missed: what a run would
	// have to measure for Met to be false. A target that cannot fail
	// measures nothing.
	Fail string
}

// Markdown writes s as markdown.
func (s Section) Markdown(w io.Writer) {
	fmt.Fprintf(w, "## %s\n\n", s.Title)
	if s.Intro != "" {
		fmt.Fprintf(w, "%s\n\n", s.Intro)
	}
	for _, t := range s.Tables {
		t.Markdown(w)
	}
	if len(s.Targets) > 0 {
		fmt.Fprintf(w, "| target | want | measured | met | how it could have failed |\n|---|---|---|---|---|\n")
		for _, t := range s.Targets {
			met := "yes"
			if !t.Met {
				met = "**no**"
			}
			fail := t.Fail
			if fail == "" {
				fail = "(not stated)" // visible, so that it gets stated
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, met, fail)
		}
		fmt.Fprintln(w)
		for _, t := range s.Targets {
			if !t.Met && t.Why != "" {
				fmt.Fprintf(w, "- Not met, %s: %s.\n", t.Name, strings.TrimSuffix(t.Why, "."))
			}
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(s.Notes) > 0 || hasUnmet(s.Targets) {
		fmt.Fprintln(w)
	}
}

func hasUnmet(ts []Target) bool {
	for _, t := range ts {
		if !t.Met && t.Why != "" {
			return true
		}
	}
	return false
}

// Markdown writes t as a markdown table.
func (t Table) Markdown(w io.Writer) {
	if t.Title != "" {
		fmt.Fprintf(w, "### %s\n\n", t.Title)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(t.Header, " | "))
	seps := make([]string, len(t.Header))
	for i := range seps {
		seps[i] = "---"
		if i > 0 {
			seps[i] = "--:"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
	for _, n := range t.Notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
}

func itoa(n int) string { return fmt.Sprintf("%d", n) }

func ratio(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}
