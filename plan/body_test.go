package plan

import (
	"maps"
	"os"
	"testing"
)

func TestBodyCountsMatchCountingEachText(t *testing.T) {
	b, err := os.ReadFile("../examples/incident-report.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, secs := range map[string][]SectionText{
		"incident report": sectionsOf(t, string(b)),
		"report":          loadReport(t),
	} {
		ix := &index{secs: secs}
		parent := make([]int, len(secs))
		for j := range secs {
			parent[j] = -1
			for k := j - 1; k >= 0; k-- {
				if ix.isAncestor(k, j) {
					parent[j] = k
					break
				}
			}
		}
		if !tiles(secs, parent) {
			t.Fatalf("%s: markdown sections do not tile", name)
		}
		got := bodyCounts(secs, parent)
		for j, s := range secs {
			want := map[string]float64{}
			for _, term := range terms(s.Text) {
				want[term]++
			}
			if !maps.Equal(got[j], want) {
				t.Errorf("%s: section %q: counts differ from counting its text", name, s.Title)
			}
		}
	}
	// Texts that do not line up with their ranges are counted as given.
	secs := []SectionText{
		{Title: "A", Level: 1, Line: 1, EndLine: 3, Text: "alpha beta"},
		{Title: "B", Level: 2, Line: 2, EndLine: 3, Text: "beta\ngamma"},
	}
	if tiles(secs, []int{-1, 0}) {
		t.Fatal("misaligned sections reported as tiling")
	}
	got := bodyCounts(secs, []int{-1, 0})
	if !maps.Equal(got[0], map[string]float64{"alpha": 1, "beta": 1}) || !maps.Equal(got[1], map[string]float64{"beta": 1, "gamma": 1}) {
		t.Errorf("fallback counts = %v", got)
	}
}

func TestFirstLines(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"a\nb\nc", 2, "a\nb"},
		{"a\nb\nc", 0, ""},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"a\n", 1, "a"},
	} {
		if got := firstLines(tc.s, tc.n); got != tc.want {
			t.Errorf("firstLines(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
