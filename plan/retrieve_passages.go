package plan

import (
	"fmt"
	"slices"
	"strings"
)

// PassageText is one passage of the document's passage index as the
// retrieval planner sees it: its id ("p17") and its text.
type PassageText struct {
	ID   string
	Text string
	// Line and EndLine are the passage's first and last lines (1-indexed);
	// with them a section too large to send whole is pointed into by its
	// passages. Zero when unknown.
	Line, EndLine int
}

// Tuning of passage retrieval. A question is answered by a sentence or two,
// so a few passages hold it; the next passage is added when it scores close
// to the best, since an answer may run on past a passage's end.
const (
	maxPassages     = 4    // passages a subtask points at, at most
	passageRatio    = 0.5  // a further passage must score this close to the best
	neighbourRatio  = 0.35 // a neighbour of a picked passage joins past this share of the best
	passageScoreMin = 0.5  // below this a passage matched only common words
)

// passageIndex is a BM25 index over the passages of a document with no
// usable headings.
type passageIndex struct {
	ps []PassageText
	bm *bm25
}

func newPassageIndex(ps []PassageText) *passageIndex { return newPassageIndexKeeping(ps, nil) }

// newPassageIndexKeeping is newPassageIndex holding postings for the terms
// of kept only (every term when nil) until another is looked up.
func newPassageIndexKeeping(ps []PassageText, kept termSet) *passageIndex {
	ix := &passageIndex{ps: ps, bm: newBM25(bm25K1, bm25B)}
	for _, p := range ps {
		tf := map[string]float64{}
		n := 0
		for t := range termSeq(p.Text) {
			n++
			if kept.has(t) {
				tf[t]++
			}
		}
		ix.bm.addCounted(tf, float64(n))
	}
	if kept != nil {
		ix.bm.lookup = func(t string) []posting {
			if !kept[t] {
				kept[t] = true
				ix.bm.post[t] = ix.scan(t)
			}
			return ix.bm.post[t]
		}
	}
	return ix
}

// scan returns the postings of term t, not kept when the index was built,
// by reading every passage again.
func (ix *passageIndex) scan(t string) []posting {
	var out []posting
	for j, p := range ix.ps {
		n := 0.0
		for u := range termSeq(p.Text) {
			if u == t {
				n++
			}
		}
		if n > 0 {
			out = append(out, posting{int32(j), n})
		}
	}
	return out
}

// pick returns the passages to point at for question q, in document order:
// the best, the others scoring at least passageRatio of it, and a picked
// passage's neighbours that score at least neighbourRatio of it, up to
// maxPassages.
func (ix *passageIndex) pick(question string) []int {
	q := slices.Compact(sortedTerms(question))
	type cand struct {
		j     int
		score float64
	}
	var cands []cand
	score := map[int]float64{}
	for _, j := range ix.bm.matching(q) {
		s := ix.bm.score(q, j)
		score[j] = s
		if s >= passageScoreMin {
			cands = append(cands, cand{j, s})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.j - b.j
	})
	top := cands[0].score
	var picked []int
	for _, c := range cands {
		if len(picked) == maxPassages || c.score < passageRatio*top {
			break
		}
		picked = append(picked, c.j)
	}
	// An answer that starts at the end of one passage runs into the next.
	for _, j := range slices.Clone(picked) {
		for _, n := range []int{j + 1, j - 1} {
			if len(picked) < maxPassages && n >= 0 && n < len(ix.ps) && !slices.Contains(picked, n) && score[n] >= neighbourRatio*top {
				picked = append(picked, n)
			}
		}
	}
	slices.Sort(picked)
	return picked
}

// point names the picked passages, a run of neighbours as one range.
func (ix *passageIndex) point(ps *Pointers, picked []int) {
	for i := 0; i < len(picked); {
		k := i
		for k+1 < len(picked) && picked[k+1] == picked[k]+1 {
			k++
		}
		id := ix.ps[picked[i]].ID
		if k > i {
			id += "-" + ix.ps[picked[k]].ID
		}
		ps.Passages = append(ps.Passages, id)
		i = k + 1
	}
}

// retrievePassages is Retrieve for a document with no usable headings: each
// sub-question, and each part of a multi-part one, points at the passages
// BM25 ranks best for it.
func retrievePassages(in RetrieveInput, max int) *Plan {
	ix := newPassageIndexKeeping(in.Passages, keepTerms(in.Task))
	p := &Plan{}
	var notes []string
	add := func(q string, picked []int, all bool) {
		st := Subtask{Task: q, Skill: chooseSkill(q, in.Skills)}
		n := len(p.Subtasks) + 1
		switch {
		case all:
			st.Scope = ScopeAll
			notes = append(notes, fmt.Sprintf("subtask %d -> every part (it counts or lists across the document)", n))
		case len(picked) == 0:
			notes = append(notes, fmt.Sprintf("subtask %d matched no passage", n))
		default:
			ix.point(&st.ContextPointers, picked)
			notes = append(notes, fmt.Sprintf("subtask %d -> passages %s", n, strings.Join(st.ContextPointers.Passages, ", ")))
		}
		p.Subtasks = append(p.Subtasks, st)
	}
	pieces := SplitTask(in.Task, max)
	for i, q := range pieces {
		if NeedsEveryPart(q) {
			add(q, nil, true)
			continue
		}
		room := max - len(p.Subtasks) - (len(pieces) - i - 1)
		qs, picks := ix.splitByTopic(q, room)
		for k := range qs {
			add(qs[k], picks[k], false)
		}
	}
	p.Reasoning = fmt.Sprintf("Built by retrieval without a model: the document has no headings to point at, so the task was split into %d sub-question(s), each matched to passages of the passage index by keyword ranking (BM25) and given a skill by cue words; %s.",
		len(p.Subtasks), strings.Join(notes, "; "))
	return p
}

// splitByTopic is index.splitByTopic over passages: the parts of a
// multi-part question each get their own passages when their best passages
// differ.
func (ix *passageIndex) splitByTopic(q string, room int) ([]string, [][]int) {
	whole := func() ([]string, [][]int) { return []string{q}, [][]int{ix.pick(q)} }
	c, ok := splitConjunction(q)
	if !ok {
		c, ok = splitComparison(q)
	}
	if !ok || room < len(c.parts) {
		return whole()
	}
	var qs []string
	var picks [][]int
	tops := map[int]bool{}
	for k := range c.parts {
		picked := ix.pick(c.query(k))
		if len(picked) == 0 {
			return whole()
		}
		qs = append(qs, c.question([]int{k}))
		picks = append(picks, picked)
		for _, j := range picked {
			tops[j] = true
		}
	}
	if len(tops) == len(picks[0]) && slices.Equal(picks[0], picks[len(picks)-1]) {
		// Every part leads to the same passages: one question there.
		return whole()
	}
	return qs, picks
}
