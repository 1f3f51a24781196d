package slice

import (
	"regexp"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// linkRefLines takes a paragraph's leading link reference definitions that
// sit one to a line before goldmark's own transformer sees the paragraph.
// goldmark removes each definition it takes by moving every line after it,
// so a paragraph of n definitions costs n²/2 line moves: 300,000 of them
// (11 MB) took minutes. Here each such line is handed to goldmark's
// transformer alone, which parses it as it would in place, and the lines
// taken go in one cut; what follows the last of them (a definition over
// several lines, a title on the next line, text) is left to goldmark as
// before. The references and the paragraph's remaining lines are the ones
// goldmark alone would give.
type linkRefLines struct{}

// linkRefTransformer is a paragraph transformer that runs before goldmark's
// (priority 100).
var linkRefTransformer = util.Prioritized(linkRefLines{}, 99)

// oneLineRef is a link reference definition that no later line can change:
// a label without brackets or escapes, a destination without spaces or
// angle brackets, and at most a quoted title closed on the same line.
// Whether it is a valid definition is still goldmark's to say.
var oneLineRef = regexp.MustCompile(`^ {0,3}\[[^\[\]\\]+\]:[ \t]*[^ \t\r\n<][^ \t\r\n]*(?:[ \t]+(?:"[^"\\]*"|'[^'\\]*'))?[ \t]*\r?\n?$`)

// mayTitleLine reports whether line could hold the title of a definition
// on the line before it: titles open with '"', '\” or '('.
func mayTitleLine(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return c == '"' || c == '\'' || c == '('
		}
	}
	return false
}

func (linkRefLines) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	src := reader.Source()
	taken := 0
	// Definitions parsed alone are not put in the document: the structure
	// pass reads only headings, and the references live in pc.
	scratch := ast.NewDocument()
	for taken < lines.Len() {
		seg := lines.At(taken)
		if !oneLineRef.Match(seg.Value(src)) {
			break
		}
		if taken+1 < lines.Len() {
			next := lines.At(taken + 1)
			if mayTitleLine(next.Value(src)) {
				break
			}
		}
		p := ast.NewParagraph()
		p.Lines().Append(seg)
		scratch.AppendChild(scratch, p)
		parser.LinkReferenceParagraphTransformer.Transform(p, reader, pc)
		isRef := p.Parent() == nil // goldmark drops a paragraph it took whole
		scratch.RemoveChildren(scratch)
		if !isRef {
			// Not a definition: the paragraph starts here.
			break
		}
		taken++
		if linkRefLineHook != nil {
			linkRefLineHook()
		}
	}
	if taken == 0 {
		return
	}
	if taken == lines.Len() {
		node.Parent().RemoveChild(node.Parent(), node)
		return
	}
	rest := text.NewSegments()
	rest.AppendAll(lines.Sliced(taken, lines.Len()))
	node.SetLines(rest)
}

// linkRefLineHook, when set (by tests), is called for every definition
// taken one line at a time.
var linkRefLineHook func()
