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
// the closest ancestor that no other section of that title has
// ("Globex > Pricing"), else by its whole path. When even the whole path is
// shared (two "## Acme" with a "### Pricing" each), no name tells them
// apart, and the section is pointed at by its line range instead. A bare
// repeated title would be resolved to the first such section, giving a
// sub-agent another vendor's price.
//
// Counting (ancestor, title) pairs keeps this linear in the number of
// sections times their depth, however often a title repeats.
func (ix *index) pointers() {
	ix.name = make([]string, len(ix.secs))
	title := make([]string, len(ix.secs))
	anc := make([][]string, len(ix.secs))
	byTitle := map[string][]int{}
	pairs := map[[2]string]int{}
	for j, s := range ix.secs {
		title[j] = foldTitle(s.Title)
		for _, a := range ancestorsOf(s) {
			anc[j] = append(anc[j], foldTitle(a))
		}
		byTitle[title[j]] = append(byTitle[title[j]], j)
		for i, a := range anc[j] {
			if !slices.Contains(anc[j][:i], a) {
				pairs[[2]string{a, title[j]}]++
			}
		}
	}
	for j, s := range ix.secs {
		same := byTitle[title[j]]
		if len(same) == 1 {
			ix.name[j] = s.Title
			continue
		}
		orig := ancestorsOf(s)
		if strings.Contains(s.Title, ">") || slices.ContainsFunc(orig, func(a string) bool { return strings.Contains(a, ">") }) {
			// A '>' inside a title would be read as a path separator.
			continue
		}
		for i := len(anc[j]) - 1; i >= 0 && ix.name[j] == ""; i-- {
			// An empty heading names nothing in a path.
			if anc[j][i] != "" && pairs[[2]string{anc[j][i], title[j]}] == 1 {
				ix.name[j] = orig[i] + pathSep + s.Title
			}
		}
		if ix.name[j] != "" || len(anc[j]) < 2 {
			continue
		}
		// Rare: no single ancestor is unique, so try the whole path,
		// which any section whose ancestors include it in order matches.
		n := 0
		for _, k := range same {
			if hasAncestorsInOrder(anc[k], anc[j]) {
				n++
			}
		}
		if n == 1 && !slices.Contains(anc[j], "") {
			ix.name[j] = strings.Join(append(slices.Clone(orig), s.Title), pathSep)
		}
	}
}

// hasAncestorsInOrder reports whether want appears in anc in order, gaps
// allowed: the assembler's rule for a path pointer. Both are folded.
func hasAncestorsInOrder(anc, want []string) bool {
	i := 0
	for _, a := range anc {
		if i < len(want) && a == want[i] {
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
