package outline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// Build outlines docs for a planner whose outline may take budget tokens (0
// or less: no limit), counting with c.
//
// When the full outline does not fit, Build tries, in order, every depth
// from the deepest to 1 with leads, then every depth from the deepest to 1
// without leads, and keeps the first that fits (a try whose estimate, the
// sum of its lines' counts, is more than 5% over the budget is skipped
// without rendering it): deeper levels collapse into
// their ancestors before any lead goes, and once leads go the structure
// comes back as deep as fits. When even the top-level headings without
// leads do not fit, it returns a *TooLargeError (wrapping ErrTooLarge). The
// result depends only on the input.
func Build(docs []Source, c Counter, budget int) (*Outline, error) {
	o := &Outline{Budget: max(budget, 0), index: map[string]int{}}
	names := map[string]bool{}
	for _, s := range docs {
		if s.Doc == nil {
			return nil, fmt.Errorf("outline: document %q is missing", s.Name)
		}
		// Pointers name the document when there are several, so two of
		// the same name would make them ambiguous.
		if names[s.Name] {
			return nil, fmt.Errorf("outline: two documents are named %q; give each a distinct name", s.Name)
		}
		names[s.Name] = true
	}
	if err := tooManyLines(docs, budget); err != nil {
		return nil, err
	}
	for _, s := range docs {
		info, entries := sections(s, c)
		o.Documents = append(o.Documents, info)
		o.all = append(o.all, entries...)
	}
	for i, e := range o.all {
		o.MaxDepth = max(o.MaxDepth, e.Depth)
		o.index[normPointer(o.Pointer(e))] = i
	}
	cost := newCosts(o, c)
	for _, leads := range []bool{true, false} {
		for depth := o.MaxDepth; depth >= min(1, o.MaxDepth); depth-- {
			// The estimate sums the counts of each line's parts; the
			// tokenizer may join or split a few tokens where the parts
			// meet, so only an estimate well over the budget is skipped
			// uncounted, and the rendered text has the last word.
			if budget > 0 && cost.estimate(depth, leads) > budget+budget/20 {
				continue
			}
			o.choose(depth, leads)
			o.Tokens = c.Count(o.Text())
			if budget <= 0 || o.Tokens <= budget {
				return o, nil
			}
		}
	}
	return nil, o.tooLarge(c)
}

// tooManyLines returns a *TooLargeError when the documents have more
// top-level headings than the budget has tokens: each is a line of the
// smallest outline, and no tokenizer spends less than a token on a line. It
// spares counting the outline of a document of a million headings (a text
// larger than the document) only to learn that it cannot fit; Need is then
// that lower bound.
func tooManyLines(docs []Source, budget int) error {
	if budget <= 0 {
		return nil
	}
	e := &TooLargeError{Budget: budget, AtLeast: true}
	for _, s := range docs {
		top := 1 + s.Doc.TopLevelHeadings() // and the document's own line
		e.Need += top
		e.PerDocument = append(e.PerDocument, DocumentNeed{Name: s.Name, Tokens: top})
	}
	if e.Need <= budget {
		return nil
	}
	return e
}

// choose fills Entries with what an outline of the given depth shows.
func (o *Outline) choose(depth int, leads bool) {
	o.Depth, o.Leads = depth, leads
	o.Entries = make([]Entry, 0, len(o.all))
	for _, e := range o.all {
		if e.Depth > depth {
			continue
		}
		if e.Depth == depth {
			e.Hidden = e.subtree
		}
		if !leads {
			e.Lead = ""
			e.Passages = nil
		}
		o.Entries = append(o.Entries, e)
	}
}

func (o *Outline) tooLarge(c Counter) error {
	e := &TooLargeError{Budget: o.Budget}
	o.choose(1, false)
	text := o.Text()
	e.Need = c.Count(text)
	for _, d := range o.Documents {
		one := &Outline{Documents: []DocumentInfo{d}}
		for _, en := range o.all {
			if en.Document == d.Name {
				one.all = append(one.all, en)
				one.MaxDepth = max(one.MaxDepth, en.Depth)
			}
		}
		one.choose(min(1, one.MaxDepth), false)
		// With one document its outline is the whole one, already
		// counted: a million headings make it megabytes.
		n := e.Need
		if t := one.Text(); t != text {
			n = c.Count(t)
		}
		e.PerDocument = append(e.PerDocument, DocumentNeed{Name: d.Name, Tokens: n})
	}
	o.Entries = nil
	return e
}

// costs holds the token count of each part of each entry's line, counted
// once, so trying a depth costs a sum and not a tokenization.
type costs struct {
	header   [2][2]int // the notes and document lines, by [collapsed][leads]
	fixed    []int     // pointer, range and size
	lead     []int
	collaps  []int // the "N subsections hidden" note
	depth    []int
	maxDepth int
}

func newCosts(o *Outline, c Counter) *costs {
	k := &costs{maxDepth: o.MaxDepth}
	for collapsed := range 2 {
		for leads := range 2 {
			o.Depth, o.Leads = o.MaxDepth-collapsed, leads == 1
			k.header[collapsed][leads] = c.Count(o.header())
		}
	}
	for _, e := range o.all {
		k.fixed = append(k.fixed, c.Count(o.fixedPart(e))+1)
		lead := 0
		if e.Lead != "" {
			lead = c.Count(leadPart(e.Lead))
		}
		if len(e.Passages) > 0 {
			lead += c.Count(passageLines(e.Passages, true))
		}
		k.lead = append(k.lead, lead)
		hid := 0
		if e.subtree > 0 {
			hid = c.Count(hiddenPart(e.subtree))
		}
		k.collaps = append(k.collaps, hid)
		k.depth = append(k.depth, e.Depth)
	}
	return k
}

func (k *costs) estimate(depth int, leads bool) int {
	collapsed, withLeads := 0, 0
	if depth < k.maxDepth {
		collapsed = 1
	}
	if leads {
		withLeads = 1
	}
	n := k.header[collapsed][withLeads]
	for i := range k.fixed {
		if k.depth[i] > depth {
			continue
		}
		n += k.fixed[i]
		if leads {
			n += k.lead[i]
		}
		if k.depth[i] == depth {
			n += k.collaps[i]
		}
	}
	return n
}

// Text renders the outline for a prompt: a note on what was collapsed, one
// line per document, then one line per entry:
//
//	Globex > Pricing [lines 10-40, 800 tokens, 3 subsections hidden]: Prices are set yearly.
func (o *Outline) Text() string {
	var b strings.Builder
	b.WriteString(o.header())
	for _, e := range o.Entries {
		b.WriteString(o.fixedPart(e))
		if e.Hidden > 0 {
			b.WriteString(hiddenPart(e.Hidden))
		}
		b.WriteByte(']')
		if e.Lead != "" {
			b.WriteString(leadPart(e.Lead))
		}
		b.WriteByte('\n')
		b.WriteString(passageLines(e.Passages, true))
	}
	return b.String()
}

func (o *Outline) header() string {
	var b strings.Builder
	b.WriteString("Each line: heading path [lines, tokens of the section with its subsections]: its first words.\n")
	if o.Depth < o.MaxDepth {
		shown := "Only top-level headings are shown"
		if o.Depth > 1 {
			shown = fmt.Sprintf("Only the top %d levels of headings are shown", o.Depth)
		}
		b.WriteString(shown + "; a heading says how many subsections it hides.\n")
	}
	if !o.Leads {
		b.WriteString("First words are left out to fit.\n")
	} else if o.largeSections() {
		b.WriteString("A section too large to send whole lists its passages under it (id [lines, tokens]: first words); point into it with passage ids.\n")
	}
	for _, d := range o.Documents {
		fmt.Fprintf(&b, "Document %q: lines 1-%d, %d tokens, %d headings", d.Name, d.Lines, d.Tokens, d.Headings)
		if d.Preamble > 0 {
			fmt.Fprintf(&b, "; text before the first heading: lines 1-%d", d.Preamble)
		}
		switch {
		case d.Headings == 0 && len(d.Passages) > 0:
			b.WriteString("; no headings: point into it with passages")
		case d.Headings == 0:
			b.WriteString("; point into it with line ranges")
		}
		b.WriteString("\n")
		for _, p := range d.Passages {
			b.WriteString(passageLine(p, o.Leads))
		}
	}
	return b.String()
}

// largeSections reports whether any entry lists passages.
func (o *Outline) largeSections() bool {
	for _, e := range o.all {
		if len(e.Passages) > 0 {
			return true
		}
	}
	return false
}

func (o *Outline) fixedPart(e Entry) string {
	return o.Pointer(e) + " [lines " + strconv.Itoa(e.Line) + "-" + strconv.Itoa(e.EndLine) + ", " + strconv.Itoa(e.Tokens) + " tokens"
}

// passageLine is one passage of a document with no headings:
//
//	p17 [line 1, 420 tokens]: Early life. Picardo was born in …
func passageLine(p slice.Passage, lead bool) string {
	lines := "line " + strconv.Itoa(p.Line)
	if p.EndLine != p.Line {
		lines = "lines " + strconv.Itoa(p.Line) + "-" + strconv.Itoa(p.EndLine)
	}
	s := p.ID + " [" + lines + ", " + strconv.Itoa(p.Tokens) + " tokens]"
	if lead && p.Lead != "" {
		s += ": " + p.Lead
	}
	return s + "\n"
}

func hiddenPart(n int) string {
	if n == 1 {
		return ", 1 subsection hidden"
	}
	return ", " + strconv.Itoa(n) + " subsections hidden"
}

func leadPart(lead string) string { return ": " + lead }
