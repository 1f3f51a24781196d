package plan

import "strings"

// bodyCounts counts the terms of each section's text. A section's text
// holds its subsections' text, so tokenizing every text would read a line
// once for each heading above it. When the sections tile their lines the way
// markdown sections do (a heading's own lines, then its subsections back to
// back to its last line), each line is read once, in the section that owns
// it, and the counts are summed up the tree: the same counts, in time linear
// in the document. Sections that do not tile are counted text by text.
func bodyCounts(secs []SectionText, parent []int) []map[string]float64 {
	counts := make([]map[string]float64, len(secs))
	if !tiles(secs, parent) {
		for j, s := range secs {
			counts[j] = map[string]float64{}
			for _, t := range terms(s.Text) {
				counts[j][t]++
			}
		}
		return counts
	}
	for j, s := range secs {
		own := s.Text
		if j+1 < len(secs) && parent[j+1] == j {
			own = firstLines(s.Text, secs[j+1].Line-s.Line)
		}
		counts[j] = map[string]float64{}
		for _, t := range terms(own) {
			counts[j][t]++
		}
	}
	// A subsection comes after its parent, so walking backwards finishes
	// each subtree before it is added to the one above.
	for j := len(secs) - 1; j >= 0; j-- {
		if p := parent[j]; p >= 0 {
			for t, f := range counts[j] {
				counts[p][t] += f
			}
		}
	}
	return counts
}

// tiles reports whether every section's text has one line per line of its
// range and its subsections follow its own lines back to back to its end.
func tiles(secs []SectionText, parent []int) bool {
	next := make([]int, len(secs)) // line the next subsection of j must start on; 0 before the first
	for j, s := range secs {
		if s.Line <= 0 || s.EndLine < s.Line || strings.Count(s.Text, "\n") != s.EndLine-s.Line {
			return false
		}
		if p := parent[j]; p >= 0 {
			if next[p] != 0 && s.Line != next[p] {
				return false
			}
			if s.Line <= secs[p].Line {
				return false
			}
			next[p] = s.EndLine + 1
		}
	}
	for j, s := range secs {
		if next[j] != 0 && next[j] != s.EndLine+1 {
			return false
		}
	}
	return true
}

// firstLines returns the first n lines of s, without the final newline.
func firstLines(s string, n int) string {
	i := 0
	for range n {
		k := strings.IndexByte(s[i:], '\n')
		if k < 0 {
			return s
		}
		i += k + 1
	}
	return s[:max(i-1, 0)]
}
