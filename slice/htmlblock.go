package slice

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// blockParsers are goldmark's default block parsers with the HTML block
// parser behind a cheap test. goldmark tries up to seven regular
// expressions on every line that starts with '<' ("- <kbd>Ctrl</kbd>" in a
// list item included), which was a third of the assembler's parse; most such
// lines are inline HTML that can open no block at all.
func blockParsers() []util.PrioritizedValue {
	ps := parser.DefaultBlockParsers()
	html := parser.NewHTMLBlockParser()
	for i, p := range ps {
		if bp, ok := p.Value.(parser.BlockParser); ok && bp == html {
			ps[i].Value = htmlBlockFilter{bp}
		}
	}
	return ps
}

// htmlBlockFilter passes a line to the HTML block parser only when it could
// open an HTML block (CommonMark types 1 to 7): "<!" or "<?", a tag whose
// name opens a block by itself (types 1 and 6), or any tag alone on its line
// (type 7: nothing but white space after the tag). It refuses no line the
// parser would accept, so the document's blocks are the same.
type htmlBlockFilter struct{ parser.BlockParser }

func (f htmlBlockFilter) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	if !mayOpenHTMLBlock(line) {
		return nil, parser.NoChildren
	}
	return f.BlockParser.Open(parent, reader, pc)
}

func mayOpenHTMLBlock(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(t) < 2 || t[0] != '<' {
		return true // not the line shape this filter knows: let the parser decide
	}
	t = t[1:]
	switch t[0] {
	case '!', '?':
		return true
	case '/':
		t = bytes.TrimLeft(t[1:], " ")
	}
	n := 0
	for n < len(t) && (isASCIILetter(t[n]) || (n > 0 && (t[n] >= '0' && t[n] <= '9' || t[n] == '-'))) {
		n++
	}
	if n == 0 {
		return false
	}
	if blockTags[string(bytes.ToLower(t[:n]))] {
		return true
	}
	return tagAloneOnLine(t[n:])
}

// tagAloneOnLine reports whether rest, what follows a tag name, could close
// the tag and end the line, as an HTML block of type 7 needs ("<kbd>Ctrl</kbd>"
// cannot): the first '>' outside a quoted attribute value ends the tag
// (neither attribute names nor unquoted values hold one), and only white
// space may follow it.
func tagAloneOnLine(rest []byte) bool {
	var quote byte
	for i, c := range rest {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return len(bytes.TrimRight(rest[i+1:], " \t\r\n")) == 0
		}
	}
	return false
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// blockTags are the tag names that open an HTML block of type 1 (script,
// pre, style, textarea) or type 6 (goldmark's list, which follows
// CommonMark's) wherever the line ends.
var blockTags = map[string]bool{
	"script": true, "pre": true, "style": true, "textarea": true,
	"address": true, "article": true, "aside": true, "base": true, "basefont": true, "blockquote": true,
	"body": true, "caption": true, "center": true, "col": true, "colgroup": true, "dd": true, "details": true,
	"dialog": true, "dir": true, "div": true, "dl": true, "dt": true, "fieldset": true, "figcaption": true,
	"figure": true, "footer": true, "form": true, "frame": true, "frameset": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "head": true, "header": true, "hr": true, "html": true,
	"iframe": true, "legend": true, "li": true, "link": true, "main": true, "menu": true, "menuitem": true,
	"meta": true, "nav": true, "noframes": true, "ol": true, "optgroup": true, "option": true, "p": true,
	"param": true, "search": true, "section": true, "summary": true, "table": true, "tbody": true, "td": true,
	"tfoot": true, "th": true, "thead": true, "title": true, "tr": true, "track": true, "ul": true,
}
