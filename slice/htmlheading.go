package slice

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// HTML headings. READMEs ("<h1 align="center">baton</h1>") and documents
// converted from HTML write headings as tags. Markdown reads such a line as
// the start of an HTML block, so the parser's tree has no heading for it:
// the structure pass looks inside the top-level HTML blocks that can hold
// markup (CommonMark types 6 and 7, not <pre>, <script>, comments) for a
// line that is one whole heading element, "<hN attrs>title</hN>", and takes
// it as a markdown heading of level N. Its id attribute is the heading's ID,
// matched as `{#id}` is. An element may also open on one line and close
// with "</hN>" ending a later line of the same block ("<h1 align=center>",
// a logo, the name, "</h1>"): within htmlHeadingSpan lines and
// htmlHeadingBytes bytes, so a block of openings never closed costs no more
// than a constant per line. A heading element sharing its line with other
// elements is left as HTML.

// htmlHeadingLine is one heading element alone on a line: its level, its
// attributes and its content.
var htmlHeadingLine = regexp.MustCompile(`(?i)^[ \t]*<h([1-6])((?:[ \t][^>]*)?)>(.*?)</h([1-6])[ \t]*>[ \t]*$`)

// htmlIDAttr and htmlAltAttr read an attribute in either quote or none.
var (
	htmlIDAttr  = regexp.MustCompile(`(?i)(?:^|[ \t])id[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|([^ \t"'=<>` + "`" + `]+))`)
	htmlAltAttr = regexp.MustCompile(`(?i)[ \t]alt[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|([^ \t"'=<>` + "`" + `]+))`)
	htmlTag     = regexp.MustCompile(`<[^>]*>`)
	// htmlHeadingOpen is a heading element's opening tag.
	htmlHeadingOpen = regexp.MustCompile(`(?i)<h[1-6][ \t/>]`)
	// tagBeforePunct is a tag right before punctuation that ends a phrase.
	tagBeforePunct = regexp.MustCompile(`<[^>]*>([.,;:!?)])`)
)

// The bound on a heading element spread over lines: at most this many
// lines, opening and closing ones included, and this many bytes.
const (
	htmlHeadingSpan  = 8
	htmlHeadingBytes = 1024
)

// htmlHeading is one heading found inside an HTML block.
type htmlHeading struct {
	level   int
	title   string
	id      string
	line    int
	endLine int // the line of the closing tag
}

// htmlHeadings returns the heading elements of the HTML block n that start
// a line and end one, in order.
func (d *Document) htmlHeadings(n *ast.HTMLBlock, src []byte) []htmlHeading {
	if n.HTMLBlockType != ast.HTMLBlockType6 && n.HTMLBlockType != ast.HTMLBlockType7 {
		return nil
	}
	var out []htmlHeading
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b := seg.Value(src)
		// Most lines of an HTML block are not headings: a look at the
		// first bytes, without a copy, before the regular expression.
		t := bytes.TrimLeft(b, " \t")
		if len(t) < 3 || t[0] != '<' || t[1]|0x20 != 'h' || t[2] < '1' || t[2] > '6' {
			continue
		}
		// The closing tag on the line or within the next few tells the
		// one-line form from the spread one before any regular expression.
		closeTag := []byte{'<', '/', 'h', t[2]}
		line, last := trimEOL(b), i
		var h htmlHeading
		var ok bool
		if containsFold(line, closeTag) {
			h, ok = parseHTMLHeading(string(line))
		} else {
			h, last, ok = spreadHTMLHeading(lines, i, closeTag, src)
		}
		if !ok {
			continue
		}
		h.line = d.lineOf(seg.Start)
		h.endLine = d.lineOf(lines.At(last).Start)
		out = append(out, h)
		i = last
	}
	return out
}

// spreadHTMLHeading reads the heading element that opens on line i of
// lines, which does not hold closeTag, and closes on a later one within the
// bound, returning it and the index of its closing line.
func spreadHTMLHeading(lines *text.Segments, i int, closeTag, src []byte) (htmlHeading, int, bool) {
	seg := lines.At(i)
	size := len(trimEOL(seg.Value(src)))
	for j := i + 1; j < lines.Len() && j < i+htmlHeadingSpan; j++ {
		seg = lines.At(j)
		b := trimEOL(seg.Value(src))
		if size += 1 + len(b); size > htmlHeadingBytes {
			break
		}
		if !containsFold(b, closeTag) {
			continue
		}
		joined := make([]byte, 0, size)
		for k := i; k <= j; k++ {
			seg = lines.At(k)
			if k > i {
				joined = append(joined, ' ')
			}
			joined = append(joined, trimEOL(seg.Value(src))...)
		}
		h, ok := parseHTMLHeading(string(joined))
		return h, j, ok
	}
	return htmlHeading{}, 0, false
}

// trimEOL is b without its line break.
func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// containsFold reports whether b holds sub, ASCII letters in either case.
func containsFold(b, sub []byte) bool { return indexFold(b, sub) >= 0 }

// indexFold is the offset of the first sub in b, ASCII letters in either
// case, or -1; sub starts with '<'.
func indexFold(b, sub []byte) int {
	for at := 0; at+len(sub) <= len(b); at++ {
		i := bytes.IndexByte(b[at:], '<')
		if i < 0 {
			return -1
		}
		at += i
		if at+len(sub) <= len(b) && bytes.EqualFold(b[at:at+len(sub)], sub) {
			return at
		}
	}
	return -1
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
	// "<h2>A</h2> <h2>B</h2>" is two elements, not one titled "A</h2> <h2>B";
	// one heading never holds another.
	if strings.Contains(strings.ToLower(inner), "</h"+m[1]) || htmlHeadingOpen.MatchString(inner) {
		return htmlHeading{}, false
	}
	// A tag stands for a space ("Foo<br>Bar"), but not before the
	// punctuation that follows a link ("on <a>Electron</a>.").
	title := tagBeforePunct.ReplaceAllString(inner, "$1")
	title = collapseSpace(html.UnescapeString(htmlTag.ReplaceAllString(title, " ")))
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
// N+1 (N below 6), in its opening and closing tags only. For an element
// spread over lines, the opening line is passed with closing false and the
// closing line with opening false.
func demoteHTMLHeading(line []byte, level int, opening, closing bool) []byte {
	out := append([]byte(nil), line...)
	from, to := byte('0'+level), byte('0'+level+1)
	open := bytes.IndexByte(out, '<')
	if opening && open >= 0 && open+2 < len(out) && out[open+2] == from {
		out[open+2] = to
	}
	if c := bytes.LastIndex(bytes.ToLower(out), []byte{'<', '/', 'h', from}); closing && c >= 0 {
		out[c+3] = to
	}
	return out
}
