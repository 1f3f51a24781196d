package slice

import "sort"

// LargeSectionBytes is the size past which a section's own text (from its
// heading to its first subsection) is too large to be useful whole to a
// sub-agent that needs a fact from it: eight passages, about 4,000 tokens of
// prose. Planners point into such a section by its passages instead
// (PassagesWithin), as they do in a document with no headings.
const LargeSectionBytes = 8 * MaxPassageBytes

// PassagesWithin returns the passages that lie wholly within lines from..to
// (1-indexed, inclusive), in order, with their leads; Tokens is left 0 for
// the caller to count with its own counter. A heading's line always starts a
// passage, so the passages of a section's own text tile it exactly.
func (d *Document) PassagesWithin(from, to int) []Passage {
	from, to = max(from, 1), min(to, d.NumLines())
	if from > to {
		return nil
	}
	start, end := d.spanOffsets(from, to)
	spans := d.passageIndex()
	i := sort.Search(len(spans), func(i int) bool { return spans[i][0] >= start })
	var out []Passage
	for ; i < len(spans) && spans[i][1] <= end; i++ {
		s := spans[i]
		out = append(out, Passage{
			ID: PassageID(i + 1), Start: s[0], End: s[1],
			Line: d.lineOf(s[0]), EndLine: d.lineOf(max(s[1]-1, s[0])),
			Lead: lead(d.text[s[0]:s[1]]),
		})
	}
	return out
}
