package slice

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// HTML headings. READMEs ("<h1 align="center">baton</h1>") and documents
// converted from HTML write headings as tags. Markdown reads such a line as
// the start of an HTML block, so the parser's tree has no heading for it:
// the structure pass looks inside the top-level HTML blocks that can hold
// markup (CommonMark types 6 and 7, not <pre>, <script>, comments) for a
// line that is one whole heading element, "<hN attrs>title</hN>", and takes
// it as a markdown heading of level N. Its id attribute is the heading's ID,
// matched as `{#id}` is. A heading element spread over several lines, or
// sharing its line with other elements, is left as HTML.

// htmlHeadingLine is one heading element alone on a line: its level, its
// attributes and its content.
var htmlHeadingLine = regexp.MustCompile(`(?i)^[ \t]*<h([1-6])((?:[ \t][^>]*)?)>(.*?)</h([1-6])[ \t]*>[ \t]*$`)

// htmlIDAttr and htmlAltAttr read an attribute in either quote or none.
var (
	htmlIDAttr  = regexp.MustCompile(`(?i)(?:^|[ \t])id[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|([^ \t"'=<>` + "`" + `]+))`)
	htmlAltAttr = regexp.MustCompile(`(?i)[ \t]alt[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|([^ \t"'=<>` + "`" + `]+))`)
	htmlTag     = regexp.MustCompile(`<[^>]*>`)
)

// htmlHeading is one heading found inside an HTML block.
type htmlHeading struct {
	level int
	title string
	id    string
	line  int
}

// htmlHeadings returns the heading elements alone on a line of the HTML
// block n, in order.
func (d *Document) htmlHeadings(n *ast.HTMLBlock, src []byte) []htmlHeading {
	if n.HTMLBlockType != ast.HTMLBlockType6 && n.HTMLBlockType != ast.HTMLBlockType7 {
		return nil
	}
	var out []htmlHeading
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b := seg.Value(src)
		// Most lines of an HTML block are not headings: a look at the
		// first bytes, without a copy, before the regular expression.
		if t := bytes.TrimLeft(b, " \t"); len(t) < 4 || t[0] != '<' || t[1]|0x20 != 'h' || t[2] < '1' || t[2] > '6' {
			continue
		}
		h, ok := parseHTMLHeading(string(bytes.TrimRight(b, "\r\n")))
		if !ok {
			continue
		}
		h.line = d.lineOf(seg.Start)
		out = append(out, h)
	}
	return out
}

// parseHTMLHeading reads one line as a heading element: the title is its
// text with tags removed and entities decoded, or an image's alt text when
// the element holds no text (a logo); a heading with neither is no heading.
func parseHTMLHeading(line string) (htmlHeading, bool) {
	m := htmlHeadingLine.FindStringSubmatch(line)
	if m == nil || m[1] != m[4] {
		return htmlHeading{}, false
	}
	inner := m[3]
	// "<h2>A</h2> <h2>B</h2>" is two elements, not one titled "A</h2> <h2>B".
	if strings.Contains(strings.ToLower(inner), "</h"+m[1]) {
		return htmlHeading{}, false
	}
	title := collapseSpace(html.UnescapeString(htmlTag.ReplaceAllString(inner, " ")))
	if title == "" {
		title = collapseSpace(html.UnescapeString(attrValue(htmlAltAttr, inner)))
	}
	if title == "" {
		return htmlHeading{}, false
	}
	return htmlHeading{
		level: int(m[1][0] - '0'),
		title: title,
		id:    html.UnescapeString(attrValue(htmlIDAttr, m[2])),
	}, true
}

// attrValue is the first value re finds in s, whichever way it is quoted.
func attrValue(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	for _, v := range m[1:] {
		if v != "" {
			return v
		}
	}
	return ""
}

// demoteHTMLHeading rewrites the level-N heading element on line as level
// N+1 (N below 6), in its opening and closing tags only.
func demoteHTMLHeading(line []byte, level int) []byte {
	out := append([]byte(nil), line...)
	from, to := byte('0'+level), byte('0'+level+1)
	open := bytes.IndexByte(out, '<')
	if open >= 0 && open+2 < len(out) && out[open+2] == from {
		out[open+2] = to
	}
	if c := bytes.LastIndex(bytes.ToLower(out), []byte{'<', '/', 'h', from}); c >= 0 {
		out[c+3] = to
	}
	return out
}
