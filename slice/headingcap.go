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
// line; ParseContext counts the refused lines in HeadingsCut. The headings
// kept are the same: the sections are the first MaxHeadings top-level
// headings, and every one of those is among the first MaxHeadings ATX ones
// when it is one.

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

// capHeadings wraps the ATX heading parser of ps in atxHeadingCap.
func capHeadings(ps []util.PrioritizedValue) []util.PrioritizedValue {
	for i, p := range ps {
		if fmt.Sprintf("%T", p.Value) == "*parser.atxHeadingParser" {
			ps[i].Value = atxHeadingCap{p.Value.(parser.BlockParser)}
			return ps
		}
	}
	panic("slice: goldmark has no ATX heading parser to cap")
}
