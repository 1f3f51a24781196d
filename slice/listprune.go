package slice

import (
	"fmt"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The structure pass reads only the document's top-level blocks (headings
// and HTML blocks), but the parser keeps every list item of a list until
// the list ends: a list of a million items held a million items and their
// paragraphs, hundreds of MB. listItemPrune drops a list's earlier items
// once the next one is closed. The parser only ever looks at a list's last
// item while the list is open (its indentation, whether it is empty), and
// the list's own close only decides whether it is tight, which nothing
// here reads; so the blocks around the list are the same.
type listItemPrune struct{ parser.BlockParser }

func (f listItemPrune) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	f.BlockParser.Close(node, reader, pc)
	list := node.Parent()
	if list == nil {
		return
	}
	for p := node.PreviousSibling(); p != nil; p = node.PreviousSibling() {
		list.RemoveChild(list, p)
	}
}

// pruneListItems wraps the list item parser of ps in listItemPrune.
func pruneListItems(ps []util.PrioritizedValue) []util.PrioritizedValue {
	for i, p := range ps {
		if fmt.Sprintf("%T", p.Value) == "*parser.listItemParser" {
			ps[i].Value = listItemPrune{p.Value.(parser.BlockParser)}
			return ps
		}
	}
	panic("slice: goldmark has no list item parser to prune")
}
