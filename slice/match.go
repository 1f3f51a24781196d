package slice

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/baton-dev/baton/internal/fuzzy"
)

// Pointers name the parts of a document a subtask needs, as a plan states
// them.
type Pointers struct {
	Sections   []string `json:"sections"`
	LineRanges [][2]int `json:"line_ranges"` // 1-indexed, inclusive
	// Passages name entries of the passage index: "p17", or "p18-p20"
	// for a run of them (see Document.Passages).
	Passages []string `json:"passages,omitempty"`
}

// Kind says how a pointer was matched, from most to least certain.
type Kind string

const (
	KindExact      Kind = "exact"      // the heading's text as written
	KindNormalized Kind = "normalized" // equal ignoring case, spacing, punctuation and markup
	KindNumbering  Kind = "numbering"  // equal once section numbers are set aside
	KindPath       Kind = "path"       // "Parent > Child" naming a heading and its ancestors
	KindFuzzy      Kind = "fuzzy"      // within the typo budget
	KindLineRange  Kind = "line_range" // a line range, clamped to the document
	KindPassage    Kind = "passage"    // a passage of the passage index, or a run of them
)

// Match is one pointer and the lines it selected.
type Match struct {
	Pointer   string `json:"pointer"`
	Heading   string `json:"heading"` // "" for a line range
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Kind      Kind   `json:"kind"`
	// Bytes is what a passage pointer selected, a byte range of the
	// document (end exclusive): a passage may begin or end inside a line.
	Bytes *[2]int `json:"bytes,omitempty"`
}

// Result is what Extract cut.
type Result struct {
	// Text is the selected lines in document order, each span once, with
	// the document's own line terminators. When Fallback is set it is the
	// whole document.
	Text      string
	Matched   []Match
	Unmatched []string // pointers that selected nothing, line ranges as "lines A-B"
	// Misses says why each unmatched pointer selected nothing, in the
	// order of Unmatched.
	Misses   []Miss
	Fallback bool     // no pointer matched, so Text is the whole document
	Warnings []string // one per unmatched pointer, ambiguities, approximate matches, the fallback
}

// Miss is a pointer that selected nothing. An ambiguous pointer names
// several sections equally well and Candidates are their unique paths, for
// the caller to cite one of them; otherwise Candidates are the nearest
// headings' unique paths, as suggestions (empty for a line range).
type Miss struct {
	Pointer    string   `json:"pointer"`
	Ambiguous  bool     `json:"ambiguous"`
	Candidates []string `json:"candidates"`
}

// maxSuggestions bounds the nearest headings named for an unmatched pointer.
const maxSuggestions = 3

// Extract cuts the lines the pointers name. Sections are matched first,
// then line ranges; each pointer is reported matched or unmatched, and each
// unmatched one is also a warning. Only when nothing matched does the whole
// document go, with Fallback set.
func (d *Document) Extract(p Pointers) Result {
	var r Result
	if len(p.Sections) > 0 {
		d.index()
	}
	for _, ptr := range p.Sections {
		m, warns, miss := d.matchSection(ptr)
		r.Warnings = append(r.Warnings, warns...)
		if miss != nil {
			r.Unmatched = append(r.Unmatched, ptr)
			r.Misses = append(r.Misses, *miss)
			continue
		}
		r.Matched = append(r.Matched, m)
	}
	n := d.NumLines()
	for _, lr := range p.LineRanges {
		name := fmt.Sprintf("lines %d-%d", lr[0], lr[1])
		a, b := max(lr[0], 1), min(lr[1], n)
		if lr[0] > lr[1] || a > b {
			r.Unmatched = append(r.Unmatched, name)
			r.Misses = append(r.Misses, Miss{Pointer: name, Candidates: []string{}})
			why := fmt.Sprintf("the document has lines 1-%d", n)
			switch {
			case n == 0:
				why = "the document is empty"
			case lr[0] > lr[1]:
				why = "the range is reversed"
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s matched nothing (%s)", name, why))
			continue
		}
		r.Matched = append(r.Matched, Match{Pointer: name, StartLine: a, EndLine: b, Kind: KindLineRange})
	}
	for _, ptr := range p.Passages {
		m, warn, ok := d.matchPassage(ptr)
		if !ok {
			r.Unmatched = append(r.Unmatched, ptr)
			r.Misses = append(r.Misses, Miss{Pointer: ptr, Candidates: []string{}})
			r.Warnings = append(r.Warnings, warn)
			continue
		}
		r.Matched = append(r.Matched, m)
	}
	if len(r.Matched) == 0 {
		r.Text = d.Text()
		r.Fallback = true
		if len(p.Sections)+len(p.LineRanges)+len(p.Passages) == 0 {
			r.Warnings = append(r.Warnings, "no pointers given; the whole document is used")
		} else {
			r.Warnings = append(r.Warnings, "no pointer matched; the whole document is used")
		}
		return r
	}
	r.Text = d.joinSpans(d.byteSpans(r.Matched))
	return r
}

// byteSpans orders the matched spans as byte ranges of the document and
// joins overlapping or adjacent ones, so a child section inside a matched
// parent adds nothing.
func (d *Document) byteSpans(ms []Match) [][2]int {
	spans := make([][2]int, len(ms))
	for i, m := range ms {
		if m.Bytes != nil {
			spans[i] = *m.Bytes
			continue
		}
		spans[i][0], spans[i][1] = d.spanOffsets(m.StartLine, m.EndLine)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	out := spans[:0:0]
	for _, s := range spans {
		if k := len(out) - 1; k >= 0 && s[0] <= out[k][1] {
			out[k][1] = max(out[k][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// joinSpans is the text of the spans in order. One span is a part of the
// document's own text: no copy. A span that ends inside a line (a passage)
// is followed by a line break before the next, so two passages of a
// one-line document do not run their words together.
func (d *Document) joinSpans(spans [][2]int) string {
	if len(spans) == 1 {
		return d.text[spans[0][0]:spans[0][1]]
	}
	var b strings.Builder
	for i, s := range spans {
		t := d.text[s[0]:s[1]]
		b.WriteString(t)
		if i+1 < len(spans) && !strings.HasSuffix(t, "\n") && !strings.HasSuffix(t, "\r") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// matchSection runs the tiers in order; the first tier with any hit wins. A
// nil Miss means the pointer matched.
func (d *Document) matchSection(ptr string) (Match, []string, *Miss) {
	if m, ok := d.matchID(ptr); ok {
		return m, nil, nil
	}
	plain := plainPointer(stripAttrBlock(ptr))
	pk := keysOf(plain)
	if pk.full == "" && pk.num == "" {
		return Match{}, []string{fmt.Sprintf("section %q matched nothing (it names no title)", ptr)}, &Miss{Pointer: ptr, Candidates: []string{}}
	}
	tiers := []struct {
		kind Kind
		find func() []int
	}{
		{KindExact, func() []int {
			return d.find(func(h *Heading) bool { return h.keys.clean == pk.clean || h.UniquePath == pk.clean })
		}},
		{KindNormalized, func() []int {
			return d.find(func(h *Heading) bool {
				return h.keys.full == pk.full || (h.keys.named != "" && h.keys.named == pk.full)
			})
		}},
		{KindNumbering, func() []int { return d.byNumbering(pk) }},
		{KindPath, func() []int { return d.byPath(plain) }},
		{KindFuzzy, func() []int { return d.byTypo(pk) }},
		{KindFuzzy, func() []int { return d.byPathFuzzy(plain) }},
	}
	for _, t := range tiers {
		hits := t.find()
		if len(hits) == 0 {
			continue
		}
		var warns []string
		pick := hits[0]
		if len(hits) > 1 {
			alts := make([]string, len(hits))
			paths := make([]string, len(hits))
			for i, j := range hits {
				alts[i] = d.describe(j)
				paths[i] = d.headings[j].UniquePath
			}
			outer, ok := d.holdsAll(hits)
			if !ok {
				// Any one of them could be the wrong vendor's price: cut
				// none, and let the caller fall back or cite a path.
				warns = append(warns, fmt.Sprintf("section %q is ambiguous: it names %s; none was used (cite one by its path)", ptr, strings.Join(alts, ", ")))
				return Match{}, warns, &Miss{Pointer: ptr, Ambiguous: true, Candidates: paths}
			}
			pick = outer
			warns = append(warns, fmt.Sprintf("section %q names %s; using %s, which holds the others", ptr, strings.Join(alts, ", "), d.describe(outer)))
		}
		h := &d.headings[pick]
		m := Match{Pointer: ptr, Heading: h.Title, StartLine: h.Line, EndLine: h.EndLine, Kind: t.kind}
		if t.kind == KindFuzzy {
			warns = append(warns, fmt.Sprintf("section %q matched %s only approximately", ptr, d.describe(pick)))
		}
		return m, warns, nil
	}
	near := d.nearest(plain, pk, maxSuggestions)
	w := fmt.Sprintf("section %q matched nothing", ptr)
	if len(near) > 0 {
		descs := make([]string, len(near))
		for i, j := range near {
			descs[i] = d.describe(j)
		}
		w += "; nearest: " + strings.Join(descs, ", ")
	}
	miss := &Miss{Pointer: ptr, Candidates: []string{}}
	for _, j := range near {
		miss.Candidates = append(miss.Candidates, d.headings[j].UniquePath)
	}
	return Match{}, []string{w}, miss
}

// attrBlock is a trailing attribute block as kramdown, pandoc and MkDocs
// write it after a heading's title: `{#id .class key=val}`.
var attrBlock = regexp.MustCompile(`\s*\{\s*#([^\s{}]+)[^{}]*\}\s*$`)

// stripAttrBlock drops a trailing attribute block from a pointer, so that
// "Title {#id}" copied from the source matches the heading "Title".
func stripAttrBlock(ptr string) string {
	if loc := attrBlock.FindStringIndex(ptr); loc != nil && loc[0] > 0 {
		return ptr[:loc[0]]
	}
	return ptr
}

// matchID matches a pointer that cites a heading's attribute-block id:
// "Title {#id}", "{#id}", "#id" or the bare id. An id names one heading
// (a document that repeats one is matched by title instead).
func (d *Document) matchID(ptr string) (Match, bool) {
	id := strings.TrimSpace(ptr)
	if m := attrBlock.FindStringSubmatch(id); m != nil {
		id = m[1]
	} else {
		id = strings.TrimPrefix(id, "#")
	}
	if id == "" || strings.ContainsAny(id, " \t") {
		return Match{}, false
	}
	hits := d.find(func(h *Heading) bool { return h.ID != "" && h.ID == id })
	if len(hits) != 1 {
		return Match{}, false
	}
	h := &d.headings[hits[0]]
	return Match{Pointer: ptr, Heading: h.Title, StartLine: h.Line, EndLine: h.EndLine, Kind: KindExact}, true
}

// holdsAll returns the hit whose section contains every other hit's, if
// there is one.
func (d *Document) holdsAll(hits []int) (int, bool) {
	for _, i := range hits {
		hi := &d.headings[i]
		all := true
		for _, j := range hits {
			if hj := &d.headings[j]; hj.Line < hi.Line || hj.EndLine > hi.EndLine {
				all = false
				break
			}
		}
		if all {
			return i, true
		}
	}
	return 0, false
}

// nearest returns up to n headings close to the pointer: most words of
// the pointer in the heading's unique path first, then the smallest edit
// distance between the pointer and the title, then document order.
func (d *Document) nearest(plain string, pk headingKeys, n int) []int {
	if pk.full == "" || len(d.headings) == 0 {
		return nil
	}
	words := strings.Fields(key(plain))
	type cand struct{ i, shared, dist int }
	cs := make([]cand, 0, len(d.headings))
	for i := range d.headings {
		h := &d.headings[i]
		shared := 0
		for _, w := range words {
			if d.pathHasWord(i, w) {
				shared++
			}
		}
		// Past half the pointer's length in edits, a heading that shares
		// no word is no suggestion, so the distance need not be exact.
		limit := max(runeLen(pk.full), runeLen(h.keys.full))
		if shared == 0 {
			limit = runeLen(pk.full) / 2
		}
		cs = append(cs, cand{i, shared, fuzzy.Distance(pk.full, h.keys.full, limit)})
	}
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].shared != cs[b].shared {
			return cs[a].shared > cs[b].shared
		}
		return cs[a].dist < cs[b].dist
	})
	// A heading that shares no word with the pointer and is not within
	// half its length in edits is no suggestion.
	out := make([]int, 0, n)
	for _, c := range cs {
		if len(out) == n {
			break
		}
		if c.shared > 0 || 2*c.dist <= runeLen(pk.full) {
			out = append(out, c.i)
		}
	}
	return out
}

// pathHasWord reports whether w is a word of heading i's title or of an
// enclosing heading's, its numbering and label ("appendix") included.
func (d *Document) pathHasWord(i int, w string) bool {
	has := func(k *headingKeys) bool { return k.label == w || k.num == w || slices.Contains(k.words, w) }
	if has(d.headings[i].keys) {
		return true
	}
	for _, j := range d.headings[i].anc {
		if has(d.headings[j].keys) {
			return true
		}
	}
	return false
}

func (d *Document) describe(i int) string {
	h := d.headings[i]
	return fmt.Sprintf("%q (lines %d-%d)", h.UniquePath, h.Line, h.EndLine)
}

func (d *Document) find(ok func(*Heading) bool) []int {
	var hits []int
	for i := range d.headings {
		if ok(&d.headings[i]) {
			hits = append(hits, i)
		}
	}
	return hits
}

// sameNumbering compares the words around the enumeration. Two different
// numbers name two different sections ("2023 Roadmap" is not "2024
// Roadmap"), so a pointer's number may be missing but never wrong.
func sameNumbering(p, h headingKeys) bool {
	if p.num != "" && h.num != "" && p.num != h.num {
		return false
	}
	if p.rest == "" {
		// "Section 3.2" alone names the heading numbered 3.2.
		return p.num != "" && p.num == h.num
	}
	return p.rest == h.rest
}

func (d *Document) byNumbering(pk headingKeys) []int {
	hits := d.find(func(h *Heading) bool { return sameNumbering(pk, *h.keys) })
	// A pointer's number settles which of several equal titles it means,
	// and its label which of several equal numbers ("Step 1" over "1.
	// Introduction").
	hits = d.prefer(hits, pk.num != "", func(h *Heading) bool { return h.keys.num == pk.num })
	return d.prefer(hits, pk.num != "", func(h *Heading) bool { return h.keys.label == pk.label })
}

// prefer narrows hits to those satisfying ok, when asked and when any do.
func (d *Document) prefer(hits []int, when bool, ok func(*Heading) bool) []int {
	if !when {
		return hits
	}
	var kept []int
	for _, i := range hits {
		if ok(&d.headings[i]) {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return hits
	}
	return kept
}

// pathSeps split "Methods > Sampling", "Methods / Sampling", "Methods ›
// Sampling", "Methods :: Sampling" and "Methods: Sampling", strongest
// first, so a '/' inside a file name survives a '>' split. Path matching
// only runs once no heading carries the whole pointer as its title.
var pathSeps = []*regexp.Regexp{
	regexp.MustCompile(`\s*(?:->|=>|>|›|»|→|::|\|)\s*`),
	regexp.MustCompile(`\s*/\s*`),
	regexp.MustCompile(`\s*:\s*`),
	regexp.MustCompile(`\s+#{1,6}\s+`), // "Globex ### Pricing", as a heading's markers cite it
}

func (d *Document) byPath(plain string) []int {
	for _, sep := range pathSeps {
		if hits := d.byPathSplit(sep.Split(plain, -1)); len(hits) > 0 {
			return hits
		}
	}
	return nil
}

// byPathFuzzy is byPath with the typo budget applied to each component:
// models misspell a parent path as readily as a title ("Methods > Samplng").
func (d *Document) byPathFuzzy(plain string) []int {
	for _, sep := range pathSeps {
		if hits := d.byPathSplitWith(sep.Split(plain, -1), d.componentClose); len(hits) > 0 {
			return hits
		}
	}
	return nil
}

func (d *Document) byPathSplit(split []string) []int {
	return d.byPathSplitWith(split, componentMatches)
}

func (d *Document) byPathSplitWith(split []string, componentMatches func(p, h headingKeys) bool) []int {
	var comps []headingKeys
	for _, c := range split {
		if k := keysOf(plainPointer(c)); k.full != "" {
			comps = append(comps, k)
		}
	}
	if len(comps) < 2 {
		return nil
	}
	leaf, parents := comps[len(comps)-1], comps[:len(comps)-1]
	return d.find(func(h *Heading) bool {
		if !componentMatches(leaf, *h.keys) {
			return false
		}
		// Each named parent must be an ancestor, in order; ancestors the
		// pointer skips are fine.
		j := 0
		for _, a := range h.anc {
			if j < len(parents) && componentMatches(parents[j], *d.headings[a].keys) {
				j++
			}
		}
		return j == len(parents)
	})
}

func componentMatches(p, h headingKeys) bool {
	return p.full == h.full || (h.named != "" && p.full == h.named) || sameNumbering(p, h)
}

// componentClose is componentMatches or a typo the typo rule accepts.
func (d *Document) componentClose(p, h headingKeys) bool {
	if componentMatches(p, h) {
		return true
	}
	_, ok := d.typoWords(p, h)
	return ok
}

// byTypo finds the headings the typo rule accepts for the pointer (see
// typo.go), those with the fewest slipped words first.
func (d *Document) byTypo(pk headingKeys) []int {
	if pk.rest == "" {
		return nil
	}
	best, bestDist := []int(nil), -1
	for i := range d.headings {
		dist, ok := d.typoWords(pk, *d.headings[i].keys)
		if !ok {
			continue
		}
		switch {
		case bestDist < 0 || dist < bestDist:
			best, bestDist = []int{i}, dist
		case dist == bestDist:
			best = append(best, i)
		}
	}
	return best
}

func runeLen(s string) int { return len([]rune(s)) }
