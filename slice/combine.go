package slice

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// NamedDoc is one input file.
type NamedDoc struct {
	Name string
	Data []byte
}

// Part locates one file in a combined document. Line StartLine is the
// "# <name>" heading Combine added; the file's own line k is combined line
// StartLine+k, up to EndLine, the file's last line. Lines Combine added after
// EndLine to close a block the file left open belong to no file.
type Part struct {
	Name      string `json:"name"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// SourceLine maps a line of the combined document back to this file's line,
// reporting false for the added heading and for lines outside the part.
func (p Part) SourceLine(combined int) (int, bool) {
	if combined <= p.StartLine || combined > p.EndLine {
		return 0, false
	}
	return combined - p.StartLine, true
}

// Combine joins several files into one document a planner can point into:
// each file becomes a top-level section "# <name>" and its own headings move
// down one level (ATX gains a '#', capped at 6; setext is rewritten as ATX on
// the same number of lines), so "file > heading" paths match. Front matter
// becomes a fenced yaml block, and whatever block a file ends inside (a code
// fence, an HTML block) is closed by lines added after it, so nothing in one
// file swallows the next file's heading.
func Combine(docs []NamedDoc) (combined []byte, parts []Part) {
	var out bytes.Buffer
	line := 0
	for _, nd := range docs {
		name := collapseSpace(nd.Name)
		if name == "" {
			name = "untitled"
		}
		out.WriteString(headingLine(name))
		line++
		// A lone '\r' ends a line: as '\n' it does so for every step
		// below, which split on '\n', and the line count is the same.
		body := demote(loneCRToLF(nd.Data), isMDXName(name))
		if len(body) > 0 && body[len(body)-1] != '\n' {
			body = append(body, '\n')
		}
		n := bytes.Count(body, []byte("\n"))
		out.Write(body)
		cl := closer(body)
		out.Write(cl)
		parts = append(parts, Part{Name: name, StartLine: line, EndLine: line + n})
		line += n + bytes.Count(cl, []byte("\n"))
	}
	return out.Bytes(), parts
}

// demote rewrites one file's section headings a level down, keeping its
// line count so Part can map lines back.
func demote(src []byte, mdx bool) []byte {
	d, _ := parseContext(context.Background(), string(src), mdx)
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if end := frontMatterEnd(src); end > 0 {
		last := d.lineOf(end - 1)
		// The fence is longer than any run of '~' inside, which would
		// close it early.
		fence := 4
		for _, l := range lines[1 : last-1] {
			t := bytes.TrimLeft(l, " \t")
			fence = max(fence, len(t)-len(bytes.TrimLeft(t, "~"))+1)
		}
		lines[0] = append(bytes.Repeat([]byte("~"), fence), "yaml\n"...)
		lines[last-1] = append(bytes.Repeat([]byte("~"), fence), '\n')
	}
	for _, h := range d.headings {
		if h.plain {
			// Not markdown: the file's text stays as it is.
			continue
		}
		if h.Level >= 6 && !h.setext {
			continue
		}
		if h.html {
			one := h.rawEnd <= h.Line
			lines[h.Line-1] = demoteHTMLHeading(lines[h.Line-1], h.Level, true, one)
			if !one {
				lines[h.rawEnd-1] = demoteHTMLHeading(lines[h.rawEnd-1], h.Level, false, true)
			}
			continue
		}
		if !h.setext {
			i := h.Line - 1
			at := bytes.IndexByte(lines[i], '#')
			lines[i] = append(append(append([]byte(nil), lines[i][:at]...), '#'), lines[i][at:]...)
			continue
		}
		// A setext heading's text may span lines; it becomes one ATX line
		// followed by blank lines in place of the rest and the underline.
		var parts []string
		for i := h.Line; i < h.rawEnd && i <= len(lines); i++ {
			parts = append(parts, strings.TrimSpace(string(d.lineBytes(src, i))))
		}
		t := strings.Join(parts, " ")
		// A trailing run of '#' would read as an ATX closing sequence.
		if i := strings.LastIndexFunc(t, func(r rune) bool { return r != '#' }); i+1 < len(t) {
			t = t[:i+1] + `\` + t[i+1:]
		}
		lines[h.Line-1] = []byte(strings.Repeat("#", min(h.Level+1, 6)) + " " + t + "\n")
		for i := h.Line; i < h.rawEnd && i < len(lines); i++ {
			lines[i] = []byte("\n")
		}
	}
	return bytes.Join(lines, nil)
}

// headingLine is the "# name" line that opens a file's section, its title
// reading exactly name: when markdown would change it (emphasis in
// "_draft_.md", an entity, a closing "#", a link), its ASCII punctuation is
// escaped.
func headingLine(name string) string {
	line := "# " + name + "\n"
	// A '[' is escaped whatever the check says: a link reference
	// definition in any of the files would make "[x]" a link.
	if hs := Parse([]byte(line)).headings; len(hs) == 1 && hs[0].Title == name && !strings.ContainsAny(name, "[]") {
		return line
	}
	var b strings.Builder
	b.WriteString("# ")
	for _, r := range name {
		if r == '&' {
			// The title resolves entities after escapes, so "\&amp;"
			// would still read "&".
			b.WriteString("&amp;")
			continue
		}
		if r < utf8.RuneSelf && strings.ContainsRune(asciiPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\n')
	return b.String()
}

// asciiPunct is what CommonMark lets a backslash escape.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// htmlEnd holds the end condition of every HTML block type that ends at a
// line (CommonMark types 1 to 5); types 6 and 7 end only at a blank line.
const htmlEnd = "--> ?> ]]> </pre></script></style></textarea>\n"

// closer returns the lines that end whatever block is still open at the end
// of body (which ends with a newline), so that a "# name" line after them is
// a top-level heading; nil when nothing is open. Each candidate is checked
// with the parser rather than trusted: the first that lets a heading through
// is used, the usual one first.
func closer(body []byte) []byte {
	last := probe(body, nil)
	if last == nil {
		return nil
	}
	var candidates [][]byte
	switch n := last.(type) {
	case *ast.FencedCodeBlock:
		// The heading went into the code; a fence of the opener's kind
		// and length closes it.
		if open := n.Pos(); open >= 0 {
			v := probeView(body, nil)[open:]
			run := bytes.IndexFunc(v, func(r rune) bool { return r != rune(v[0]) })
			if run >= 3 {
				candidates = append(candidates, append(bytes.Repeat(v[:1], run), '\n'))
			}
		}
	case *ast.HTMLBlock:
		if n.HTMLBlockType < ast.HTMLBlockType6 {
			candidates = append(candidates, []byte(htmlEnd))
		}
	}
	candidates = append(candidates, []byte("\n"), []byte(htmlEnd+"\n"))
	for _, c := range candidates {
		if probe(body, c) == nil {
			return c
		}
	}
	// Not reached for any input the fuzz tests found; the strongest
	// candidate is the best left.
	return candidates[len(candidates)-1]
}

// probeHead stands for the heading Combine puts before body, so that body is
// parsed where it will be: not at the start of a document.
const probeHead = "# x\n"

func probeView(body, closer []byte) []byte {
	v := make([]byte, 0, len(probeHead)+len(body)+len(closer)+len(probeHead))
	v = append(append(append(append(v, probeHead...), body...), closer...), probeHead...)
	return parseView(v, false)
}

// probe parses body and closer between two headings and returns nil when the
// second is a top-level level-1 heading, else the top-level block that took
// its line.
func probe(body, closer []byte) ast.Node {
	v := probeView(body, closer)
	root := markdown().Parse(text.NewReader(v))
	last := root.LastChild()
	if h, ok := last.(*ast.Heading); ok && h.Level == 1 && h.Pos() == len(v)-len(probeHead) {
		return nil
	}
	return last
}
