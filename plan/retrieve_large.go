package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Large sections. A question after one fact that BM25 leads to a section of
// 40,000 tokens would otherwise send all of it; when the section's text is
// over RetrieveInput.LargeSectionBytes, the subtask points instead at the
// passages inside it that rank best for the question (as in a document with
// no headings). Only a question read as a lookup (the fact-extraction cue
// skill) is narrowed: a summary, a critique or a comparison of the section
// needs all of it. When no passage inside ranks above the floor, the
// section goes whole.

// largeSections holds the passage indexes of the large sections met so far.
type largeSections struct {
	bound    int
	passages []PassageText // the document's, in order, with their lines
	ix       map[int]*passageIndex
	kept     termSet
}

func newLargeSections(in RetrieveInput) *largeSections {
	return &largeSections{bound: in.LargeSectionBytes, passages: in.Passages, ix: map[int]*passageIndex{}, kept: keepTerms(in.Task)}
}

// narrow returns the passage pointers to send instead of section j for
// question q, or nil to send the section.
func (l *largeSections) narrow(j int, s SectionText, q string) []string {
	if l.bound <= 0 || len(s.Text) <= l.bound || s.Line <= 0 || s.EndLine < s.Line || cueSkill(q) != fallbackSkill {
		return nil
	}
	ix, ok := l.ix[j]
	if !ok {
		ix = l.within(s.Line, s.EndLine)
		l.ix[j] = ix
	}
	if ix == nil {
		return nil
	}
	picked := ix.pick(q)
	if len(picked) == 0 {
		return nil
	}
	var ps Pointers
	ix.point(&ps, picked)
	return ps.Passages
}

// within indexes the passages inside lines from..to; nil when there are
// fewer than two (nothing to choose between) or the passages carry no
// lines.
func (l *largeSections) within(from, to int) *passageIndex {
	ps := l.passages
	a := sort.Search(len(ps), func(i int) bool { return ps[i].Line >= from })
	b := a
	for b < len(ps) && ps[b].Line > 0 && ps[b].EndLine <= to {
		b++
	}
	if b-a < 2 {
		return nil
	}
	return newPassageIndexKeeping(ps[a:b], l.kept.clone())
}

// largeNote is the reasoning's note for a subtask narrowed to passages
// inside a large section.
func largeNote(n int, s SectionText, ids []string, bound int) string {
	return fmt.Sprintf("subtask %d -> passages %s inside %q (%d bytes, over the %d-byte bound for sending a section whole)",
		n, strings.Join(ids, ", "), s.Title, len(s.Text), bound)
}
