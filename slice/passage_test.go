package slice

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// biography is one line with run-in titles and no line break, the shape of
// a long-document QA set's documents: nothing for sections or line ranges
// to point at.
func biography(n int) string {
	var b strings.Builder
	for i := range n {
		if i%7 == 0 {
			fmt.Fprintf(&b, "Chapter %d title. ", i/7+1)
		}
		fmt.Fprintf(&b, "In year %d the painter Castellón finished work number %d in Jerez de la Frontera, Andalucía. ", 1900+i, i)
	}
	return b.String()
}

// checkTiling checks what every passage index promises: the passages tile
// the text in order, none is over the bound, and none is cut inside a word
// or a UTF-8 character.
func checkTiling(t *testing.T, text string, ps []Passage) {
	t.Helper()
	at := 0
	for i, p := range ps {
		if p.ID != fmt.Sprintf("p%d", i+1) {
			t.Fatalf("passage %d has id %q", i+1, p.ID)
		}
		if p.Start != at || p.End <= p.Start {
			t.Fatalf("%s spans %d-%d, want it to start at %d", p.ID, p.Start, p.End, at)
		}
		if p.End-p.Start > MaxPassageBytes && i < len(ps)-1 {
			t.Errorf("%s is %d bytes, over %d", p.ID, p.End-p.Start, MaxPassageBytes)
		}
		if p.End < len(text) && !utf8.RuneStart(text[p.End]) {
			t.Errorf("%s ends inside a UTF-8 character", p.ID)
		}
		at = p.End
	}
	if at != len(text) {
		t.Fatalf("passages end at %d of %d bytes", at, len(text))
	}
}

func TestPassagesOfOneLine(t *testing.T) {
	text := biography(800)
	d := ParseString(text)
	if len(d.Outline()) != 0 {
		t.Fatalf("a one-line biography has headings: %v", d.Outline())
	}
	ps := d.Passages()
	checkTiling(t, text, ps)
	if len(ps) < len(text)/MaxPassageBytes {
		t.Fatalf("%d passages for %d bytes", len(ps), len(text))
	}
	for _, p := range ps[:len(ps)-1] {
		// Cut at a sentence end: the passage ends with ". " and the next
		// starts with a capital.
		if !strings.HasSuffix(text[p.Start:p.End], ". ") {
			t.Errorf("%s ends %q, not at a sentence end", p.ID, text[p.End-10:p.End])
		}
		if p.Tokens <= 0 || p.Line != 1 || p.EndLine != 1 || p.Lead == "" {
			t.Errorf("%s: %+v", p.ID, p)
		}
	}
	r := d.Extract(Pointers{Passages: []string{"p2"}})
	if r.Fallback || r.Text != text[ps[1].Start:ps[1].End] {
		t.Fatalf("p2 gave fallback=%v %q", r.Fallback, r.Text)
	}
	r = d.Extract(Pointers{Passages: []string{"P3 - p5", "p4"}})
	if r.Text != text[ps[2].Start:ps[4].End] || len(r.Matched) != 2 || r.Matched[0].Kind != KindPassage {
		t.Fatalf("p3-p5 gave %+v", r.Matched)
	}
	r = d.Extract(Pointers{Passages: []string{"p1", "p3"}})
	if want := text[ps[0].Start:ps[0].End] + "\n" + text[ps[2].Start:ps[2].End]; r.Text != want {
		t.Fatalf("p1 and p3 joined as %q", r.Text)
	}
	r = d.Extract(Pointers{Passages: []string{"p9999", "x7", "p5-p2"}})
	if !r.Fallback || len(r.Unmatched) != 3 || len(r.Warnings) != 4 {
		t.Fatalf("bad passage pointers: %+v", r.Warnings)
	}
	if !strings.Contains(r.Warnings[0], fmt.Sprintf("p1-p%d", len(ps))) {
		t.Errorf("warning %q does not say which passages exist", r.Warnings[0])
	}
}

// A megabyte on one line with no space at all is still cut, between UTF-8
// characters.
func TestPassagesOfAMegabyteWithoutSpaces(t *testing.T) {
	text := strings.Repeat("日本語テキストé", 1<<20/len("日本語テキストé"))
	d := ParseString(text)
	ps := d.Passages()
	checkTiling(t, text, ps)
	for _, p := range ps {
		if !utf8.ValidString(text[p.Start:p.End]) {
			t.Fatalf("%s is not valid UTF-8", p.ID)
		}
	}
}

// Headings start passages, so a passage never holds two sections, and a
// document read by lines only has the same ids as a parsed one.
func TestPassagesFollowHeadings(t *testing.T) {
	text := "# One\n\nshort.\n\n# Two\n\n" + strings.Repeat("A sentence of the second section.\n\n", 120) + "# Three\n\nend.\n"
	d := Parse([]byte(text))
	ps := d.Passages()
	checkTiling(t, text, ps)
	starts := map[int]bool{}
	for _, p := range ps {
		starts[p.Line] = true
		if strings.Count(text[p.Start:p.End], "# ") > 1 {
			t.Errorf("%s holds two headings", p.ID)
		}
	}
	for _, h := range d.Outline() {
		if !starts[h.Line] {
			t.Errorf("heading %q (line %d) does not start a passage", h.Title, h.Line)
		}
	}
	lo := LinesOnly([]byte(text)).Passages()
	if fmt.Sprint(lo) != fmt.Sprint(ps) {
		t.Errorf("LinesOnly gives other passages:\n%v\n%v", lo, ps)
	}
	// Paragraph breaks are preferred to sentence ends.
	for _, p := range ps[1 : len(ps)-1] {
		if !strings.HasSuffix(text[p.Start:p.End], "\n\n") {
			t.Errorf("%s ends %q, not at a paragraph break", p.ID, text[max(p.End-20, 0):p.End])
		}
	}
}

func FuzzPassages(f *testing.F) {
	f.Add("# a\n\nb. C d\n")
	f.Add(strings.Repeat("x", 5000))
	f.Add(strings.Repeat("Word é. ", 700))
	f.Add("\r\r# x\r" + strings.Repeat("yy\r\n", 900))
	f.Fuzz(func(t *testing.T, text string) {
		d := ParseString(text)
		ps := d.Passages()
		if text == "" {
			if len(ps) != 0 {
				t.Fatalf("passages of an empty document: %v", ps)
			}
			return
		}
		checkTiling(t, text, ps)
		for _, p := range ps {
			if p.Line < 1 || p.EndLine < p.Line || p.EndLine > d.NumLines() {
				t.Fatalf("%s has lines %d-%d of %d", p.ID, p.Line, p.EndLine, d.NumLines())
			}
			r := d.Extract(Pointers{Passages: []string{p.ID}})
			if r.Text != text[p.Start:p.End] {
				t.Fatalf("%s extracts %q, want %q", p.ID, r.Text, text[p.Start:p.End])
			}
		}
	})
}
