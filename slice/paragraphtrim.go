package slice

import (
	"bytes"
	"fmt"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A paragraph holds a record of every one of its lines until it closes: a
// paragraph of five million one-letter lines held hundreds of MB, though
// the structure pass drops a paragraph's text once it is closed
// (dropParagraphText). Only two things read a paragraph's lines: its
// leading link reference definitions, and a setext underline, which makes
// the lines a heading's title. paragraphTrim keeps a paragraph that could
// open with a definition whole, and of any other one its first line and
// its last maxParagraphLines: the blocks are the same, and only a heading
// whose title runs over that many lines (one no one writes) loses the
// middle of its title.
type paragraphTrim struct{ parser.BlockParser }

// maxParagraphLines is how many of a paragraph's last lines are kept.
const maxParagraphLines = 4096

func (f paragraphTrim) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	st := f.BlockParser.Continue(node, reader, pc)
	lines := node.Lines()
	if n := lines.Len(); n >= 2*maxParagraphLines {
		if first := lines.At(0); mayOpenDefinition(first.Value(reader.Source())) {
			return st
		}
		kept := text.NewSegments()
		kept.Append(lines.At(0))
		kept.AppendAll(lines.Sliced(n-maxParagraphLines, n))
		node.SetLines(kept)
		if paragraphTrimHook != nil {
			paragraphTrimHook()
		}
	}
	return st
}

// paragraphTrimHook, when set (by tests), is called at every trim.
var paragraphTrimHook func()

// mayOpenDefinition reports whether line could start a link reference
// definition: up to three spaces, then '['.
func mayOpenDefinition(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && len(t) > 0 && t[0] == '['
}

// structureBlockParsers are the block parsers of the structure pass:
// goldmark's, with the HTML block filter, the heading cap, list item pruning
// and paragraph trimming.
func structureBlockParsers() []util.PrioritizedValue {
	return trimParagraphs(pruneListItems(capHeadings(blockParsers())))
}

// trimParagraphs wraps the paragraph parser of ps in paragraphTrim.
func trimParagraphs(ps []util.PrioritizedValue) []util.PrioritizedValue {
	for i, p := range ps {
		if fmt.Sprintf("%T", p.Value) == "*parser.paragraphParser" {
			ps[i].Value = paragraphTrim{p.Value.(parser.BlockParser)}
			return ps
		}
	}
	panic("slice: goldmark has no paragraph parser to trim")
}
