package slice

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// TestHeadingsPastMax: past MaxHeadings, headings are read as text, the
// last section taken runs to the end, and the cut is counted.
func TestHeadingsPastMax(t *testing.T) {
	var b strings.Builder
	for i := range MaxHeadings + 5 {
		fmt.Fprintf(&b, "# H%d\n", i)
	}
	d := ParseString(b.String())
	hs := d.Outline()
	if len(hs) != MaxHeadings || d.HeadingsCut() != 5 {
		t.Fatalf("%d headings taken, %d cut; want %d and 5", len(hs), d.HeadingsCut(), MaxHeadings)
	}
	last := hs[len(hs)-1]
	if last.Title != fmt.Sprintf("H%d", MaxHeadings-1) || last.EndLine != d.NumLines() {
		t.Errorf("last section %q runs to line %d; want H%d to the last line, %d", last.Title, last.EndLine, MaxHeadings-1, d.NumLines())
	}
	if d := ParseString("# a\n\n## b\n"); d.HeadingsCut() != 0 {
		t.Errorf("a small document has %d headings cut", d.HeadingsCut())
	}
}

// TestHeadingsPastMaxNotBuilt: the parser builds no heading node past
// MaxHeadings top-level ones (a million of them held hundreds of MB), and
// headings nested in block quotes do not count towards the bound.
func TestHeadingsPastMaxNotBuilt(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "> # Q%d\n\n", i)
	}
	for i := range MaxHeadings + 7 {
		fmt.Fprintf(&b, "# H%d\n", i)
	}
	src := []byte(b.String())
	d := Parse(src)
	if hs := d.Outline(); len(hs) != MaxHeadings || d.HeadingsCut() != 7 || hs[len(hs)-1].Title != fmt.Sprintf("H%d", MaxHeadings-1) {
		t.Fatalf("%d headings taken, %d cut; want %d and 7", len(hs), d.HeadingsCut(), MaxHeadings)
	}
	pc := parser.NewContext()
	pc.Set(headingCapKey, &headingCap{})
	root := blocksOnly().Parse(text.NewReader(src), parser.WithContext(pc))
	built := 0
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindHeading {
			built++
		}
	}
	if built != MaxHeadings {
		t.Errorf("the parser built %d top-level headings, want %d", built, MaxHeadings)
	}
}
