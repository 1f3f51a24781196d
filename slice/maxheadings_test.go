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

// builtHeadings is how many top-level heading nodes the parser builds for
// src.
func builtHeadings(src []byte) int {
	pc := parser.NewContext()
	pc.Set(headingCapKey, &headingCap{})
	root := blocksOnly().Parse(text.NewReader(src), parser.WithContext(pc))
	built := 0
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindHeading {
			built++
		}
	}
	return built
}

// TestSetextHeadingsPastMax: setext headings count towards MaxHeadings with
// ATX ones, and past it the parser builds no heading node for them either
// (a million of them held 1.5 GB); the cut is counted as for ATX headings.
func TestSetextHeadingsPastMax(t *testing.T) {
	var b strings.Builder
	for i := range MaxHeadings + 7 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "H%d\n===\n", i)
		case 1:
			fmt.Fprintf(&b, "H%d\nsecond line\n---\n\n", i)
		default:
			fmt.Fprintf(&b, "## H%d\n", i)
		}
	}
	src := []byte(b.String())
	d := Parse(src)
	hs := d.Outline()
	if len(hs) != MaxHeadings || d.HeadingsCut() != 7 {
		t.Fatalf("%d headings taken, %d cut; want %d and 7", len(hs), d.HeadingsCut(), MaxHeadings)
	}
	want := fmt.Sprintf("H%d", MaxHeadings-1)
	if (MaxHeadings-1)%3 == 1 {
		want += " second line"
	}
	if last := hs[len(hs)-1]; last.Title != want || last.EndLine != d.NumLines() {
		t.Errorf("last section %q runs to line %d; want %q to line %d", last.Title, last.EndLine, want, d.NumLines())
	}
	if built := builtHeadings(src); built != MaxHeadings {
		t.Errorf("the parser built %d top-level headings, want %d", built, MaxHeadings)
	}
	// Below the bound nothing changes: a setext heading is a section.
	if d := ParseString("Title\n=====\n\ntext\n\nSub\n---\n"); len(d.Outline()) != 2 || d.HeadingsCut() != 0 {
		t.Errorf("a small document: %d headings, %d cut; want 2 and 0", len(d.Outline()), d.HeadingsCut())
	}
}
