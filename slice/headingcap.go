package slice

import (
	"fmt"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Past MaxHeadings the structure pass reads headings as text, but the
// parser would still build a heading node and its text for each: a million
// of them held about 400 MB at once. atxHeadingCap refuses a top-level ATX
// heading line once the parse has opened MaxHeadings of them, so the line
// is read as a paragraph's text, which the parser holds as a few bytes a
// line; ParseContext counts the refused lines in HeadingsCut. setextHeadingCap
// does the same for setext headings (a title line and its "===" or "---"
// underline), which count towards the same bound: the underline past it is
// read as text of the paragraph above it (a "---" as the thematic break it
// also is). The headings kept are the same: the sections are the first
// MaxHeadings top-level headings, and every one of those is among the first
// MaxHeadings headings the parser opens at the top level.

// headingCapKey holds a parse's *headingCap in its parser.Context: the
// parser is shared by every parse.
var headingCapKey = parser.NewContextKey()

type headingCap struct {
	opened, refused int
}

type atxHeadingCap struct{ parser.BlockParser }

func (f atxHeadingCap) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	hc, _ := pc.Get(headingCapKey).(*headingCap)
	top := hc != nil && parent.Kind() == ast.KindDocument
	if top && hc.opened >= MaxHeadings {
		if line, _ := reader.PeekLine(); atxLine.Match(line) {
			hc.refused++
			return nil, parser.NoChildren
		}
	}
	n, st := f.BlockParser.Open(parent, reader, pc)
	if n != nil && top {
		hc.opened++
	}
	return n, st
}

// SetOption passes the parser's options (heading attributes) on to the
// parser wrapped.
func (f atxHeadingCap) SetOption(name parser.OptionName, value any) {
	if so, ok := f.BlockParser.(parser.SetOptioner); ok {
		so.SetOption(name, value)
	}
}

type setextHeadingCap struct{ parser.BlockParser }

// Open asks goldmark first, so that only an underline that would make a
// heading is refused and counted. What the refused Open left in the context
// (the paragraph it would have taken) is read only by the heading's Close,
// which never runs for it.
func (f setextHeadingCap) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	n, st := f.BlockParser.Open(parent, reader, pc)
	hc, _ := pc.Get(headingCapKey).(*headingCap)
	if n == nil || hc == nil || parent.Kind() != ast.KindDocument {
		return n, st
	}
	if hc.opened >= MaxHeadings {
		hc.refused++
		return nil, parser.NoChildren
	}
	hc.opened++
	return n, st
}

// SetOption passes the parser's options (heading attributes) on to the
// parser wrapped.
func (f setextHeadingCap) SetOption(name parser.OptionName, value any) {
	if so, ok := f.BlockParser.(parser.SetOptioner); ok {
		so.SetOption(name, value)
	}
}

// capHeadings wraps the ATX and setext heading parsers of ps in
// atxHeadingCap and setextHeadingCap.
func capHeadings(ps []util.PrioritizedValue) []util.PrioritizedValue {
	wrapped := 0
	for i, p := range ps {
		switch fmt.Sprintf("%T", p.Value) {
		case "*parser.atxHeadingParser":
			ps[i].Value = atxHeadingCap{p.Value.(parser.BlockParser)}
			wrapped++
		case "*parser.setextHeadingParser":
			ps[i].Value = setextHeadingCap{p.Value.(parser.BlockParser)}
			wrapped++
		}
	}
	if wrapped != 2 {
		panic("slice: goldmark has no ATX or no setext heading parser to cap")
	}
	return ps
}
