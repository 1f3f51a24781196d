package outline

import (
	"strings"

	"github.com/baton-dev/baton/slice"
)

// maxSectionPassages bounds the passage lines listed under one section too
// large to be useful whole: past it, consecutive passages are listed in runs
// ("p40-p42"), as evenly as the count allows, so the whole section stays
// covered in at most this many lines.
const maxSectionPassages = 24

// largeSectionPassages is the passage list of a section whose own text
// (body, lines from..to: its heading to its first subsection) is over
// slice.LargeSectionBytes, with the size of that text: each listed run is
// counted once by c, and the runs tile the text, so their sum is its size
// and no byte is counted twice. It returns nil for any other section (or one
// whose passages do not tile it, which the caller then counts whole).
func largeSectionPassages(d *slice.Document, body string, from, to int, c Counter) ([]slice.Passage, int) {
	if len(body) <= slice.LargeSectionBytes {
		return nil, 0
	}
	ps := runsOf(d.PassagesWithin(from, to), maxSectionPassages)
	text := d.Text()
	size, covered := 0, 0
	for i, p := range ps {
		ps[i].Tokens = c.Count(text[p.Start:p.End])
		size += ps[i].Tokens
		covered += p.End - p.Start
	}
	if covered != len(body) {
		return nil, 0
	}
	if ps[0].Line == from {
		// The first passage starts with the heading: its lead is the
		// section's, without the heading line.
		ps[0].Lead = lead(text[ps[0].Start:ps[0].End])
	}
	return ps, size
}

// runsOf merges consecutive passages into at most n runs of near-equal
// length; a run is named by its first and last ids ("p40-p42"), which a
// slice pointer accepts, and keeps its first passage's lead. Tokens are
// left for the caller to count.
func runsOf(ps []slice.Passage, n int) []slice.Passage {
	if len(ps) <= n {
		return ps
	}
	out := make([]slice.Passage, 0, n)
	for k := range n {
		a, b := k*len(ps)/n, (k+1)*len(ps)/n
		run := ps[a]
		last := ps[b-1]
		if b-1 > a {
			run.ID += "-" + last.ID
		}
		run.End, run.EndLine = last.End, last.EndLine
		out = append(out, run)
	}
	return out
}

// passageLines renders an entry's passages, one line each, indented under
// the entry's line.
func passageLines(ps []slice.Passage, lead bool) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  ")
		b.WriteString(passageLine(p, lead))
	}
	return b.String()
}
