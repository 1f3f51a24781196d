package slice

import (
	"fmt"
	"strings"
)

// PathSep joins the parts of a heading's unique path.
const PathSep = " > "

// uniquePaths gives every heading a path naming it alone: its ancestors'
// paths and its own title joined with PathSep ("Globex > Pricing"). Headings
// with the same title under the same parent are told apart by an ordinal,
// all of them numbered ("Notes (1)", "Notes (2)"), so that the bare title
// stays ambiguous rather than quietly meaning the first. A path that would
// still repeat one given before (a title that is itself "Notes (2)", or
// that contains " > ") takes the next free ordinal.
func (d *Document) uniquePaths() {
	type sib struct {
		parent int
		title  string
	}
	parentOf := func(h *Heading) int {
		if len(h.anc) == 0 {
			return -1
		}
		return h.anc[len(h.anc)-1]
	}
	// Titles equal but for case are duplicates: matching ignores case.
	titleKey := strings.ToLower
	count := make(map[sib]int, len(d.headings))
	for i := range d.headings {
		h := &d.headings[i]
		count[sib{parentOf(h), titleKey(h.Title)}]++
	}
	seen := make(map[sib]int, len(d.headings))
	used := make(map[string]bool, len(d.headings))
	for i := range d.headings {
		h := &d.headings[i]
		s := sib{parentOf(h), titleKey(h.Title)}
		prefix := ""
		if s.parent >= 0 {
			prefix = d.headings[s.parent].UniquePath + PathSep
		}
		seen[s]++
		ord := 0
		if count[s] > 1 {
			ord = seen[s]
		}
		for {
			name := h.Title
			if ord > 0 {
				name = strings.TrimSpace(fmt.Sprintf("%s (%d)", h.Title, ord))
			}
			if p := prefix + name; !used[p] {
				h.UniquePath, h.name = p, name
				used[p] = true
				break
			}
			ord++
		}
	}
}
