package plan

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode"
)

// SectionText is one section of the document as the retrieval planner sees
// it. Path is the heading path from the top of the document; it may or may
// not end with Title. Line and EndLine (1-indexed, inclusive) let Retrieve
// tell a subsection from its parent; when they are zero it uses Path.
type SectionText struct {
	Title   string
	Path    []string
	Level   int
	Line    int
	EndLine int
	Text    string
}

// RetrieveInput is everything the retrieval planner needs.
type RetrieveInput struct {
	Task        string
	Sections    []SectionText
	Skills      []SkillInfo
	MaxSubtasks int // DefaultMaxSubtasks when zero or negative
	// Passages is the document's passage index. When no section has a
	// title (text without headings) the plan points at passages; with
	// sections, a sub-question that matches no section gets passages
	// rather than the whole document.
	Passages []PassageText
	// LargeSectionBytes, when positive, is the size past which a section
	// a lookup leads to is pointed into by its passages rather than sent
	// whole (see largeSections); the passages need their lines for it.
	LargeSectionBytes int
}

// Tuning of the retrieval ranking. BM25's usual constants; a title word
// counts as three body words because headings name what a section is about.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	titleWeight   = 3.0
	pathWeight    = 1.0
	scoreFloor    = 0.5  // below this a section matched only common words
	secondRatio   = 0.75 // a second section must score close to the first, or it is noise
	maxPerSubtask = 2
)

// Retrieve builds a plan without a model: it splits the task into
// sub-questions, ranks sections against each with BM25 and picks a skill by
// cue words. A question that counts or lists across the whole document
// (NeedsEveryPart) gets ScopeAll and no pointers instead. It is deterministic, so the same input always gives the same
// plan. It never uses "self", since no model is there to answer.
//
// Each subtask points at the best one or two sections scoring above a floor,
// each by a name the assembler resolves to that section alone: its title,
// or "Parent > Title" when the title is repeated (see index.pointers). A
// parent's text holds its subsections', so a subsection takes its parent's
// place when it matches every query word the parent matches (at least one in
// its own title or text, not only through the heading path); a section is
// never listed with its own ancestor. Sections with an empty title are never
// pointed at. A sub-question that matches nothing gets no pointers, and the
// assembler falls back to the whole document and reports it.
func Retrieve(in RetrieveInput) *Plan {
	max := in.MaxSubtasks
	if max <= 0 {
		max = DefaultMaxSubtasks
	}
	if len(in.Passages) > 0 && !slices.ContainsFunc(in.Sections, func(s SectionText) bool { return strings.TrimSpace(s.Title) != "" }) {
		return retrievePassages(in, max)
	}
	idx := newIndexKeeping(in.Sections, keepTerms(in.Task))
	var pix *passageIndex
	pieces := SplitTask(in.Task, max)
	var questions []string
	var picks [][]int
	var everyPart []bool
	for i, q := range pieces {
		if NeedsEveryPart(q) {
			// A count or a list over the whole document: no ranking can
			// say which sections hold every instance, so it stays one
			// question and runs over all parts.
			questions, picks, everyPart = append(questions, q), append(picks, nil), append(everyPart, true)
			continue
		}
		// A piece may grow into several subtasks only while the pieces
		// still to come keep their own place under max.
		room := max - len(questions) - (len(pieces) - i - 1)
		qs, ps := idx.splitByTopic(q, room)
		questions = append(questions, qs...)
		picks = append(picks, ps...)
		for range qs {
			everyPart = append(everyPart, false)
		}
	}
	p := &Plan{}
	var notes []string
	large := newLargeSections(in)
	for i, q := range questions {
		st := Subtask{Task: q, Skill: chooseSkill(q, in.Skills)}
		var narrowed []string
		for _, j := range picks[i] {
			if ids := large.narrow(j, in.Sections[j], q); ids != nil {
				st.ContextPointers.Passages = append(st.ContextPointers.Passages, ids...)
				narrowed = append(narrowed, largeNote(i+1, in.Sections[j], ids, large.bound))
				continue
			}
			idx.point(&st.ContextPointers, j)
		}
		notes = append(notes, narrowed...)
		p.Subtasks = append(p.Subtasks, st)
		if everyPart[i] {
			p.Subtasks[len(p.Subtasks)-1].Scope = ScopeAll
			notes = append(notes, fmt.Sprintf("subtask %d -> every part (it counts or lists across the document)", i+1))
			continue
		}
		if len(picks[i]) == 0 && len(in.Passages) > 0 {
			if pix == nil {
				pix = newPassageIndexKeeping(in.Passages, keepTerms(in.Task))
			}
			if pp := pix.pick(q); len(pp) > 0 {
				pix.point(&p.Subtasks[len(p.Subtasks)-1].ContextPointers, pp)
				notes = append(notes, fmt.Sprintf("subtask %d matched no section -> passages %s", i+1, strings.Join(p.Subtasks[len(p.Subtasks)-1].ContextPointers.Passages, ", ")))
				continue
			}
		}
		switch {
		case len(picks[i]) == 0:
			notes = append(notes, fmt.Sprintf("subtask %d matched no section", i+1))
		case len(narrowed) == len(picks[i]):
			// The notes on the passages said it all.
		default:
			notes = append(notes, fmt.Sprintf("subtask %d -> %s", i+1, describePointers(st.ContextPointers)))
		}
	}
	p.Reasoning = fmt.Sprintf("Built by retrieval without a model: the task was split into %d sub-question(s), each matched to sections by keyword ranking (BM25) and given a skill by cue words; %s.",
		len(questions), strings.Join(notes, "; "))
	return p
}

// splitByTopic splits a question about several things ("the risks and the
// revenue", "compare X with Y") into one question per section they lead to,
// in at most room questions, and returns each with its picked sections.
// Parts that lead to the same best section stay together, so "pros and cons
// of X", or any misreading of the sentence, costs nothing when the document
// answers it in one place; and the question stays whole when any part alone
// finds nothing, since it would then go to a sub-agent with the whole
// document.
//
// A section whose title names one part belongs to that part: another part
// that reaches it only through its text ("revenue" in a risk that names the
// revenue it threatens) takes its own next best section instead, so the
// revenue is not dropped in favour of the risks.
func (ix *index) splitByTopic(q string, room int) ([]string, [][]int) {
	whole := func() ([]string, [][]int) { return []string{q}, [][]int{ix.pick(q)} }
	c, ok := splitConjunction(q)
	if !ok {
		c, ok = splitComparison(q)
	}
	if !ok || room < 2 {
		return whole()
	}
	picks := make([][]int, len(c.parts))
	for k := range c.parts {
		picks[k] = ix.pick(c.query(k))
		if len(picks[k]) == 0 {
			return whole()
		}
	}
	// Sections claimed by a part that names them in their title.
	claimed := map[int]int{}
	for k, p := range picks {
		if ix.titleHas(p[0], c.parts[k]) {
			if _, taken := claimed[p[0]]; !taken {
				claimed[p[0]] = k
			}
		}
	}
	for k, p := range picks {
		owner, ok := claimed[p[0]]
		if !ok || owner == k || ix.titleHas(p[0], c.parts[k]) {
			continue
		}
		avoid := map[int]bool{}
		for j := range claimed {
			avoid[j] = true
		}
		if alt := ix.pickAvoiding(c.query(k), avoid); len(alt) > 0 {
			picks[k] = alt
		}
	}
	var groups [][]int // part indexes, grouped by their best section
	tops := map[int]int{}
	for k, p := range picks {
		g, seen := tops[p[0]]
		if !seen {
			g = len(groups)
			tops[p[0]] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], k)
	}
	if len(groups) < 2 || len(groups) > room {
		return whole()
	}
	var qs []string
	var ps [][]int
	for _, g := range groups {
		sub := c.question(g)
		qs = append(qs, sub)
		if len(g) == 1 {
			ps = append(ps, picks[g[0]])
			continue
		}
		ps = append(ps, ix.pick(sub))
	}
	return qs, ps
}

// titleHas reports whether a content word of part is a word of section j's
// own title.
func (ix *index) titleHas(j int, part string) bool {
	title := terms(ix.secs[j].Title)
	for _, t := range terms(part) {
		if slices.Contains(title, t) {
			return true
		}
	}
	return false
}

// index is a BM25 index over sections with the title as a weighted field.
// A section's counts are its own words (title and text) plus the words of
// the heading path above it; they are never held per section, only as the
// body's postings and the headings' (see bodyIndex), and put together for
// one query term at a time in postings.
type index struct {
	secs   []SectionText
	kept   termSet // terms with postings; nil for all, see keep
	body   *bodyIndex
	head   map[int32][]headPosting  // title and path terms by term number (body.vocab), in section order
	bm     *bm25                    // own words plus the heading path above
	terms  map[string]*termPostings // postings already put together, by query term
	name   []string                 // each section's pointer; "" when only a line range names it
	parent []int                    // the enclosing section's index, or -1
}

func newIndex(secs []SectionText) *index { return newIndexKeeping(secs, nil) }

// newIndexKeeping is newIndex holding postings for the terms of kept only
// (every term when nil) until another is looked up.
func newIndexKeeping(secs []SectionText, kept termSet) *index {
	ix := &index{kept: kept, secs: secs, bm: newBM25(bm25K1, bm25B), head: map[int32][]headPosting{}, terms: map[string]*termPostings{}}
	ix.bm.lookup = func(t string) []posting { return ix.postings(t).all }
	// Sections come in document order, so the open ancestors form a
	// stack.
	var open []int
	for j := range secs {
		for len(open) > 0 && !ix.isAncestor(open[len(open)-1], j) {
			open = open[:len(open)-1]
		}
		ix.parent = append(ix.parent, -1)
		if len(open) > 0 {
			ix.parent[j] = open[len(open)-1]
		}
		open = append(open, j)
	}
	ix.body = newBodyIndex(secs, ix.parent, kept)
	counts := map[string]*headPosting{}
	var seen []string
	for j, s := range secs {
		clear(counts)
		seen = seen[:0]
		n := ix.body.lens[j] + headTerms(s, func(t string, title bool) {
			if !kept.has(t) {
				return
			}
			c := counts[t]
			if c == nil {
				c = &headPosting{sec: int32(j)}
				counts[t] = c
				seen = append(seen, t)
			}
			if title {
				c.title++
			} else {
				c.path++
			}
		})
		for _, t := range seen {
			id := ix.body.id(t)
			ix.head[id] = append(ix.head[id], *counts[t])
		}
		ix.bm.addLen(n)
	}
	ix.pointers()
	return ix
}

// ancestorsOf returns the headings above s in its path.
func ancestorsOf(s SectionText) []string {
	p := s.Path
	if len(p) > 0 && p[len(p)-1] == s.Title {
		p = p[:len(p)-1]
	}
	return p
}

func (ix *index) score(q []string, j int) float64 { return ix.bm.score(q, j) }

// has reports whether section j holds term t, in its own words or its path.
func (ix *index) has(j int, t string) bool { return ix.bm.tf(t, j) > 0 }

// pick returns the indexes of the sections to point at for question q.
func (ix *index) pick(question string) []int { return ix.pickAvoiding(question, nil) }

// pickAvoiding is pick with the sections in avoid left out.
func (ix *index) pickAvoiding(question string, avoid map[int]bool) []int {
	q := slices.Compact(sortedTerms(question))
	type cand struct {
		j     int
		score float64
	}
	var cands []cand
	for _, j := range ix.bm.matching(q) {
		if strings.TrimSpace(ix.secs[j].Title) == "" || avoid[j] {
			continue // a pointer names a section by its title
		}
		if s := ix.score(q, j); s >= scoreFloor {
			cands = append(cands, cand{j, s})
		}
	}
	// Highest score first; ties go to the deeper section, then document
	// order, so the result never depends on map order.
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		case ix.secs[a.j].Level != ix.secs[b.j].Level:
			return ix.secs[b.j].Level - ix.secs[a.j].Level
		}
		return a.j - b.j
	})
	var picked []int
	var top float64
	for _, c := range cands {
		if len(picked) == maxPerSubtask {
			break
		}
		if len(picked) > 0 && c.score < secondRatio*top {
			break
		}
		// A section's text contains its subsections', so a parent always
		// matches at least as much as any child. A subsection that covers
		// every query word the parent covers holds all the parent offers
		// for this question, in less text: it takes the parent's place
		// and score. Done here, for the few sections that get picked,
		// because it costs a pass over the index.
		if d := ix.coveringDescendant(q, c.j, avoid); d >= 0 {
			c.j = d
		}
		if slices.ContainsFunc(picked, func(p int) bool {
			return p == c.j || ix.isAncestor(p, c.j) || ix.isAncestor(c.j, p)
		}) {
			continue
		}
		if len(picked) == 0 {
			top = c.score
		}
		picked = append(picked, c.j)
	}
	return ix.mergeSiblings(q, picked)
}

// mergeSiblings returns the parent instead of two of its subsections when a
// query word they match in their titles is also the parent's: "6.1 Impact by
// region" and "6.2 Impact by customer tier" for "the impact of the outage"
// are two parts of "6. Impact", which holds the rest of the answer too.
// Subsections that match on words of their own ("Per-Seat Plan" and
// "Usage-Based Plan" under "Pricing") stay apart.
func (ix *index) mergeSiblings(q []string, picked []int) []int {
	if len(picked) != 2 {
		return picked
	}
	p := ix.parent[picked[0]]
	if p < 0 || p != ix.parent[picked[1]] || strings.TrimSpace(ix.secs[p].Title) == "" {
		return picked
	}
	in := func(j int, t string) bool { return slices.Contains(terms(ix.secs[j].Title), t) }
	for _, t := range q {
		if in(p, t) && in(picked[0], t) && in(picked[1], t) {
			return []int{p}
		}
	}
	return picked
}

// coveringDescendant returns the best-scoring section inside section a
// that matches every query term a matches, at least one of them in its own
// title or text, or -1.
func (ix *index) coveringDescendant(q []string, a int, avoid map[int]bool) int {
	want := 0
	for _, t := range q {
		if ix.has(a, t) {
			want++
		}
	}
	best, bestScore := -1, 0.0
	for _, d := range ix.bm.matching(q) {
		if d == a || avoid[d] || strings.TrimSpace(ix.secs[d].Title) == "" || !ix.isAncestor(a, d) {
			continue
		}
		have, ownHit := 0, false
		for _, t := range q {
			if ix.has(d, t) {
				have++
			}
			ownHit = ownHit || ix.hasOwn(d, t)
		}
		// Matching only through the heading path says nothing: every
		// sibling inherits the same path, and the question is about the
		// parent's topic as a whole.
		if have < want || !ownHit {
			continue
		}
		if s := ix.score(q, d); best < 0 || s > bestScore || (s == bestScore && ix.secs[d].Level > ix.secs[best].Level) {
			best, bestScore = d, s
		}
	}
	return best
}

// isAncestor reports whether section a contains section b.
func (ix *index) isAncestor(a, b int) bool {
	sa, sb := ix.secs[a], ix.secs[b]
	if sa.Line > 0 && sa.EndLine > 0 && sb.Line > 0 && sb.EndLine > 0 {
		return sa.Line < sb.Line && sb.EndLine <= sa.EndLine && sa.Level < sb.Level
	}
	pa := append(slices.Clone(ancestorsOf(sa)), sa.Title)
	pb := append(slices.Clone(ancestorsOf(sb)), sb.Title)
	return len(pa) < len(pb) && slices.Equal(pa, pb[:len(pa)])
}

func sortedTerms(s string) []string {
	t := terms(s)
	slices.Sort(t)
	return t
}

// terms lowercases, splits on anything but letters and digits, drops
// stopwords and strips common suffixes, so "Latencies" and "latency" meet.
func terms(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if stopwords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// termSeq yields the terms of s one at a time, the ones terms returns, in
// order. An index reads a document's text through it: a passage of five
// million words held a string header for each, 80 MB, and as much again
// while the split grew, where a count or a few kept words is all it needs.
// A word lowercased alone is the word of s lowercased whole: lowercasing
// keeps a rune a letter or digit, or neither.
func termSeq(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range s {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && !yieldTerm(s[start:i], yield) {
				return
			}
			start = -1
		}
		if start >= 0 {
			yieldTerm(s[start:], yield)
		}
	}
}

// yieldTerm yields word w as terms has it, unless it is a stopword, and
// reports whether to go on.
func yieldTerm(w string, yield func(string) bool) bool {
	w = strings.ToLower(w)
	if stopwords[w] {
		return true
	}
	return yield(stem(w))
}

// stem is a crude suffix stripper: good enough to match plural and verb
// forms in short questions, and deterministic.
func stem(w string) string {
	for _, suf := range []struct{ from, to string }{
		{"ies", "y"}, {"ing", ""}, {"edly", ""}, {"ed", ""}, {"ly", ""}, {"es", ""}, {"s", ""},
	} {
		if strings.HasSuffix(w, suf.from) && len(w)-len(suf.from)+len(suf.to) >= 3 {
			if suf.from == "s" && strings.HasSuffix(w, "ss") {
				continue
			}
			return w[:len(w)-len(suf.from)] + suf.to
		}
	}
	// "cause", "caused" and "causes" all become "caus".
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		return w[:len(w)-1]
	}
	return w
}

// stopwords holds function words plus words tasks use to ask ("document",
// "describe", "summarise") that say nothing about where the answer is; a
// request for an overview must not send every subtask to the section titled
// "Overview".
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing down during each few
		for from further had has have having he her here hers herself him himself his how i if in into is it
		its itself just me more most my myself no nor not now of off on once only or other our ours ourselves
		out over own same she should so some such than that the their theirs them themselves then there these
		they this those through to too under until up very was we were what when where which while who whom
		will with would you your yours yourself yourselves
		according answer answers based briefly describe detail details document documents explain give list
		mention mentioned please question questions say says section sections state stated tell text using
		gist overview summarise summarize summary report paper article`) {
		m[w] = true
	}
	return m
}()

// point adds section j to ps under the name the assembler resolves to it
// alone.
func (ix *index) point(ps *Pointers, j int) {
	s := ix.secs[j]
	switch {
	case ix.name[j] != "":
		ps.Sections = append(ps.Sections, ix.name[j])
	case s.Line > 0 && s.EndLine >= s.Line:
		ps.LineRanges = append(ps.LineRanges, [2]int{s.Line, s.EndLine})
	default:
		// No line numbers to fall back on: the title is the best name
		// there is, and the assembler reports it as ambiguous.
		ps.Sections = append(ps.Sections, s.Title)
	}
}

func describePointers(ps Pointers) string {
	var q []string
	for _, s := range ps.Sections {
		q = append(q, fmt.Sprintf("%q", s))
	}
	for _, r := range ps.LineRanges {
		q = append(q, fmt.Sprintf("lines %d-%d", r[0], r[1]))
	}
	for _, id := range ps.Passages {
		q = append(q, "passage "+id)
	}
	return strings.Join(q, ", ")
}
