package bench

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// Pointer variant kinds, as models write a heading they cite.
var pointerKinds = []string{"exact", "other case", "numbering added/removed", "emphasis", "code span", "trailing colon", "parent path", "one typo", "names nothing", kindRealWord}

// headingsPerDoc bounds how many headings of each document are cited.
const headingsPerDoc = 16

// nothingPointers name no section of any corpus document.
var nothingPointers = []string{
	"Pricing and Billing",
	"Appendix Z: Glossary of Terms",
	"Quarterly Revenue Forecast",
	"Disaster Recovery Drill Results",
}

// PointerOutcome counts what one matcher made of one kind of pointer.
type PointerOutcome struct {
	N, Recall, Wrong, Fallback int
	SliceTokens, IntendedTok   int
}

// PointerResult is the outcome per document, kind and matcher.
type PointerResult struct {
	Docs []string
	// ByKind[kind][matcher], matcher "baton" or "seed".
	ByKind map[string]map[string]*PointerOutcome
	// ByDoc[doc][matcher] over every kind that cites a real section.
	ByDoc map[string]map[string]*PointerOutcome
	// WrongExamples lists baton's wrong matches, for the report.
	WrongExamples []string
	// FallbackExamples lists the pointers to a real section that baton
	// matched to nothing.
	FallbackExamples []string
	// RealWordExamples lists the real-word pointers tried, for the report.
	RealWordExamples []string
}

type citedHeading struct {
	h      slice.Heading
	ord    int // position among its siblings, 1-based
	tokens int
}

// RunPointers cites headings of every corpus document in each variant and
// runs baton's assembler and the seed's rule on each pointer alone.
func RunPointers(tasks []*Task) PointerResult {
	c := tokens.ForModel(ModelName)
	res := PointerResult{ByKind: map[string]map[string]*PointerOutcome{}, ByDoc: map[string]map[string]*PointerOutcome{}}
	for _, k := range pointerKinds {
		res.ByKind[k] = map[string]*PointerOutcome{"baton": {}, "seed": {}}
	}
	vocab := vocabulary(tasks)
	for _, t := range tasks {
		res.Docs = append(res.Docs, t.ID)
		res.ByDoc[t.ID] = map[string]*PointerOutcome{"baton": {}, "seed": {}}
		docTokens := c.Count(t.Text)
		for _, ch := range citedHeadings(t) {
			ch.tokens = c.Count(sectionText(t.Doc, ch.h.Line, ch.h.EndLine))
			for _, v := range pointerVariants(ch) {
				for _, m := range []string{"baton", "seed"} {
					o := pointerOutcome(t, c, docTokens, m, v.ptr, &ch.h, ch.tokens)
					res.ByKind[v.kind][m].add(o)
					res.ByDoc[t.ID][m].add(o)
					if m == "baton" && o.Wrong > 0 {
						res.WrongExamples = append(res.WrongExamples, fmt.Sprintf("%s: %q (%s)", t.ID, v.ptr, v.kind))
					}
					if m == "baton" && o.Fallback > 0 {
						res.FallbackExamples = append(res.FallbackExamples, fmt.Sprintf("%q for %q (%s)", v.ptr, ch.h.Title, v.kind))
					}
				}
			}
			if ptr, ok := realWordVariant(ch.h.Title, vocab, t.Doc); ok {
				res.RealWordExamples = append(res.RealWordExamples, fmt.Sprintf("%q for %q", ptr, ch.h.Title))
				for _, m := range []string{"baton", "seed"} {
					o := pointerOutcome(t, c, docTokens, m, ptr, nil, 0)
					res.ByKind[kindRealWord][m].add(o)
					if m == "baton" && o.Wrong > 0 {
						res.WrongExamples = append(res.WrongExamples, fmt.Sprintf("%s: %q for %q (%s)", t.ID, ptr, ch.h.Title, kindRealWord))
					}
				}
			}
		}
		for _, p := range nothingPointers {
			if namesAHeading(t.Doc, p) {
				continue
			}
			for _, m := range []string{"baton", "seed"} {
				o := pointerOutcome(t, c, docTokens, m, p, nil, 0)
				res.ByKind["names nothing"][m].add(o)
				if m == "baton" && o.Wrong > 0 {
					res.WrongExamples = append(res.WrongExamples, fmt.Sprintf("%s: %q (names nothing)", t.ID, p))
				}
			}
		}
	}
	return res
}

func (o *PointerOutcome) add(p PointerOutcome) {
	o.N += p.N
	o.Recall += p.Recall
	o.Wrong += p.Wrong
	o.Fallback += p.Fallback
	o.SliceTokens += p.SliceTokens
	o.IntendedTok += p.IntendedTok
}

// pointerOutcome runs one matcher on one pointer. want is nil for a pointer
// that names nothing; then any match is wrong.
func pointerOutcome(t *Task, c *tokens.Counter, docTokens int, matcher, ptr string, want *slice.Heading, wantTokens int) PointerOutcome {
	o := PointerOutcome{N: 1, IntendedTok: wantTokens}
	var spans [][2]int
	var text string
	fallback := false
	if matcher == "baton" {
		r := t.Doc.Extract(slice.Pointers{Sections: []string{ptr}})
		fallback = r.Fallback
		for _, m := range r.Matched {
			spans = append(spans, [2]int{m.StartLine, m.EndLine})
		}
		text = r.Text
	} else {
		spans, fallback = SeedSpans(t.Doc, []string{ptr})
		if !fallback {
			var b strings.Builder
			for _, s := range mergeSpans(spans) {
				b.WriteString(sectionText(t.Doc, s[0], s[1]))
			}
			text = b.String()
		}
	}
	if fallback {
		// The whole document holds the section, but a fallback is not
		// recall: it is counted apart.
		o.Fallback = 1
		o.SliceTokens = docTokens
		return o
	}
	o.SliceTokens = c.Count(text)
	if want == nil {
		o.Wrong = 1
		return o
	}
	for _, s := range spans {
		if s[0] <= want.Line && s[1] >= want.EndLine {
			o.Recall = 1
			return o
		}
	}
	o.Wrong = 1
	return o
}

// citedHeadings picks the headings a planner would cite: first the corpus
// task's intended sections, then headings spread over the document whose
// title is unique in it (a duplicate title would be cited with its path).
func citedHeadings(t *Task) []citedHeading {
	outline := t.Doc.Outline()
	count := map[string]int{}
	for _, h := range outline {
		count[strings.ToLower(h.Title)]++
	}
	ords := make([]int, len(outline))
	sib := map[string]int{}
	for i, h := range outline {
		key := strings.Join(h.Path, "\x00")
		sib[key]++
		ords[i] = sib[key]
	}
	var out []citedHeading
	seen := map[int]bool{}
	addIdx := func(i int) {
		if seen[i] || len(out) >= headingsPerDoc {
			return
		}
		seen[i] = true
		out = append(out, citedHeading{h: outline[i], ord: ords[i]})
	}
	for _, secs := range t.Intended {
		for _, s := range secs {
			h, err := FindHeading(t.Doc, s)
			if err != nil {
				continue
			}
			for i := range outline {
				if outline[i].Line == h.Line && count[strings.ToLower(h.Title)] == 1 {
					addIdx(i)
				}
			}
		}
	}
	var unique []int
	for i, h := range outline {
		if count[strings.ToLower(h.Title)] == 1 {
			unique = append(unique, i)
		}
	}
	if n := len(unique); n > 0 {
		step := max(n/headingsPerDoc, 1)
		for j := 0; j < n; j += step {
			addIdx(unique[j])
		}
	}
	return out
}

type pointerVariant struct{ kind, ptr string }

var leadingNumber = regexp.MustCompile(`^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+`)

func pointerVariants(ch citedHeading) []pointerVariant {
	t := ch.h.Title
	vs := []pointerVariant{{"exact", t}}
	other := strings.ToLower(t)
	if other == t {
		other = strings.ToUpper(t)
	}
	vs = append(vs, pointerVariant{"other case", other})
	if loc := leadingNumber.FindStringIndex(t); loc != nil && hasWord(t[loc[1]:]) {
		vs = append(vs, pointerVariant{"numbering added/removed", t[loc[1]:]})
	} else if loc == nil && hasWord(t) && !startsWithDigit(t) {
		vs = append(vs, pointerVariant{"numbering added/removed", fmt.Sprintf("%d. %s", ch.ord, t)})
	}
	vs = append(vs,
		pointerVariant{"emphasis", "**" + t + "**"},
		pointerVariant{"code span", "`" + t + "`"},
		pointerVariant{"trailing colon", t + ":"},
	)
	if n := len(ch.h.Path); n > 0 {
		vs = append(vs, pointerVariant{"parent path", ch.h.Path[n-1] + " > " + t})
	}
	if typo, ok := oneTypo(t); ok {
		vs = append(vs, pointerVariant{"one typo", typo})
	}
	return vs
}

// oneTypo swaps two neighbouring letters in the middle of the title's
// longest word, the commonest slip; titles without a word of four letters
// get none.
func oneTypo(t string) (string, bool) {
	rs := []rune(t)
	bestStart, bestLen := -1, 0
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && unicode.IsLetter(rs[j]) {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	if bestLen < 4 {
		return "", false
	}
	k := bestStart + bestLen/2
	for k+1 < bestStart+bestLen && rs[k] == rs[k+1] {
		k++
	}
	if k+1 >= bestStart+bestLen || rs[k] == rs[k+1] {
		return "", false
	}
	rs[k], rs[k+1] = rs[k+1], rs[k]
	return string(rs), true
}

// hasWord reports whether s holds a word of three letters or more: what is
// left of "2.6.0 (2026-10-23)" without its number is not a title a model
// would cite, since the number is the heading's name, not its enumeration.
func hasWord(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
			if n >= 3 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// startsWithDigit tells a version or a date ("1.0.0-RC3 - 2021-09-02"),
// which no model numbers, from a title it might ("3. Usage").
func startsWithDigit(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

func namesAHeading(d *slice.Document, p string) bool {
	for _, h := range d.Outline() {
		if strings.EqualFold(h.Title, p) {
			return true
		}
	}
	return false
}

// PointerSection renders the pointer robustness benchmark.
func PointerSection(r PointerResult) Section {
	kinds := Table{
		Title:  "By kind of pointer (all documents)",
		Header: []string{"pointer", "n", "baton recall", "baton wrong", "baton fallbacks", "baton slice/intended", "seed recall", "seed wrong", "seed fallbacks", "seed slice/intended"},
	}
	var tb, ts PointerOutcome
	for _, k := range pointerKinds {
		b, s := r.ByKind[k]["baton"], r.ByKind[k]["seed"]
		if !negativeKind(k) {
			tb.add(*b)
			ts.add(*s)
		}
		kinds.Rows = append(kinds.Rows, pointerRow(k, b, s))
	}
	kinds.Rows = append(kinds.Rows, pointerRow("**all citing a real section**", &tb, &ts))
	kinds.Notes = []string{"*recall*: the slice cut by the pointer holds the intended section; a fallback to the whole document is never recall and is counted under fallbacks alone. " +
		"*wrong*: a section was cut that does not hold the intended one (for pointers that name nothing: any cut at all). " +
		"*slice/intended*: tokens handed over / tokens of the intended section; a fallback hands over the whole document. " +
		"For \"names nothing\" and \"" + kindRealWord + "\" rows there is no intended section, so recall and the ratio do not apply and the right outcome is a fallback. " +
		"*" + kindRealWord + "*: the heading's longest word changed by one edit into another word the corpus uses, never only an ending added or dropped, which is the same word inflected (\"Posting\" for \"Hosting\", not \"Created\" for \"Create\"); such a pointer names something else, so binding it to the heading is a wrong bind."}
	docs := Table{
		Title:  "By document (every kind that cites a real section)",
		Header: []string{"document", "pointers", "baton recall", "baton wrong", "baton fallbacks", "seed recall", "seed wrong", "seed fallbacks"},
	}
	for _, d := range r.Docs {
		b, s := r.ByDoc[d]["baton"], r.ByDoc[d]["seed"]
		docs.Rows = append(docs.Rows, []string{d, itoa(b.N), pct(b.Recall, b.N), itoa(b.Wrong), itoa(b.Fallback), pct(s.Recall, s.N), itoa(s.Wrong), itoa(s.Fallback)})
	}
	// Recall without fallbacks is the share of pointers that found their
	// section by matching.
	var pos PointerOutcome
	for _, k := range pointerKinds {
		if !negativeKind(k) {
			pos.add(*r.ByKind[k]["baton"])
		}
	}
	wrong := tb.Wrong + r.ByKind["names nothing"]["baton"].Wrong + r.ByKind[kindRealWord]["baton"].Wrong
	typo := r.ByKind["one typo"]["baton"]
	rw := r.ByKind[kindRealWord]["baton"]
	var notes []string
	if len(r.FallbackExamples) > 0 {
		notes = append(notes, fmt.Sprintf("baton fell back to the whole document for %d pointers to a real section: %s. A fallback is safe (the slice holds the section) but costs the whole context.",
			len(r.FallbackExamples), strings.Join(firstN(r.FallbackExamples, 12), "; ")))
	}
	s := Section{
		Title: "2. Pointer robustness",
		Intro: fmt.Sprintf("Up to %d headings per corpus document (the tasks' intended sections first, then headings with a unique title spread over the document) are cited "+
			"in each way models write them, and each pointer is cut alone by baton's assembler (`slice`) and by the seed's rule. "+
			"Pointers that name nothing (%s) are cited in every document where no heading has that title.", headingsPerDoc, quoteList(nothingPointers)),
		Tables: []Table{kinds, docs},
		Notes:  notes,
		Targets: []Target{
			{Name: "baton recall, fallbacks apart, every kind but typos", Want: "100%", Got: fmt.Sprintf("%s (%d of %d)", pct(pos.Recall-typo.Recall, pos.N-typo.N), pos.Recall-typo.Recall, pos.N-typo.N),
				Met: pos.Recall-typo.Recall == pos.N-typo.N, Why: "see the rows below 100%",
				Fail: "a pointer written as models write headings (other case, numbering, markup, a parent path) that the assembler does not resolve falls back or cuts another section"},
			{Name: "typo pointers that fall back under the current typo rule", Want: "(reported)", Got: fmt.Sprintf("%d of %d", typo.Fallback, typo.N), Met: true,
				Fail: "reported, not judged: the rule refuses words under 6 letters, substitutions and words the document uses, by design; each refusal costs the whole document"},
			{Name: "real-word pointers refused (a fallback, never a bind)", Want: "all", Got: fmt.Sprintf("%d of %d", rw.Fallback, rw.N), Met: rw.Fallback == rw.N,
				Why:  "the typo rule bound a pointer that is another real word to a heading: " + strings.Join(firstN(r.WrongExamples, 8), "; "),
				Fail: "a typo rule that accepts any one-edit slip binds a pointer naming another real word to the heading it resembles"},
			{Name: "baton wrong binds", Want: "0", Got: itoa(wrong), Met: wrong == 0,
				Why:  "baton cut a section that does not hold the intended one: " + strings.Join(firstN(r.WrongExamples, 8), "; "),
				Fail: "any cut of a section that does not hold the intended one, or any cut at all for a pointer that names nothing or another word"},
		},
	}
	if len(r.RealWordExamples) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("The %d real-word pointers tried include %s.", len(r.RealWordExamples), strings.Join(firstN(r.RealWordExamples, 10), "; ")))
	}
	return s
}

func pointerRow(name string, b, s *PointerOutcome) []string {
	return []string{name, itoa(b.N),
		pct(b.Recall, b.N), itoa(b.Wrong), itoa(b.Fallback), ratio(b.SliceTokens, b.IntendedTok),
		pct(s.Recall, s.N), itoa(s.Wrong), itoa(s.Fallback), ratio(s.SliceTokens, s.IntendedTok)}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func firstN(ss []string, n int) []string {
	if len(ss) > n {
		return append(ss[:n:n], fmt.Sprintf("and %d more", len(ss)-n))
	}
	return ss
}
