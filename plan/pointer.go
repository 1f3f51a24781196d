package plan

import (
	"slices"
	"strings"
)

// pathSep joins a section's ancestors and title into a pointer the
// assembler resolves as a path ("Globex > Pricing").
const pathSep = " > "

// pointers works out, once per index, how each section is named in a plan.
// A title that occurs once is its own pointer. A repeated title is named by
// the shortest path that picks it alone: its nearest ancestor first
// ("Globex > Pricing"), then its whole path. When even the whole path is
// shared (two "## Acme" with a "### Pricing" each), no name tells them
// apart, and the section is pointed at by its line range instead. A bare
// repeated title would be resolved to the first such section, giving a
// sub-agent another vendor's price.
func (ix *index) pointers() {
	ix.name = make([]string, len(ix.secs))
	byTitle := map[string][]int{}
	for j, s := range ix.secs {
		k := foldTitle(s.Title)
		byTitle[k] = append(byTitle[k], j)
	}
	for j, s := range ix.secs {
		same := byTitle[foldTitle(s.Title)]
		if len(same) == 1 {
			ix.name[j] = s.Title
			continue
		}
		anc := ancestorsOf(s)
		if strings.Contains(s.Title, ">") || slices.ContainsFunc(anc, func(a string) bool { return strings.Contains(a, ">") }) {
			// A '>' inside a title would be read as a path separator.
			continue
		}
		candidates := [][]string{}
		if len(anc) > 0 {
			candidates = append(candidates, []string{anc[len(anc)-1]})
		}
		if len(anc) > 1 {
			candidates = append(candidates, anc)
		}
		for _, c := range candidates {
			n := 0
			for _, k := range same {
				if hasAncestorsInOrder(ancestorsOf(ix.secs[k]), c) {
					n++
				}
			}
			if n == 1 {
				ix.name[j] = strings.Join(append(append([]string(nil), c...), s.Title), pathSep)
				break
			}
		}
	}
}

// hasAncestorsInOrder reports whether want appears in anc in order, gaps
// allowed: the assembler's rule for a path pointer.
func hasAncestorsInOrder(anc, want []string) bool {
	i := 0
	for _, a := range anc {
		if i < len(want) && foldTitle(a) == foldTitle(want[i]) {
			i++
		}
	}
	return i == len(want)
}

// foldTitle is the comparison the assembler's path matching makes, near
// enough: case and spacing ignored.
func foldTitle(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
