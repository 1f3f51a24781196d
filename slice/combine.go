package slice

import (
	"bytes"
	"strings"

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
// StartLine+k, up to EndLine.
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
// becomes a fenced yaml block and an unclosed code fence or HTML block is
// closed, so nothing in one file swallows the next file's heading.
func Combine(docs []NamedDoc) (combined []byte, parts []Part) {
	var out bytes.Buffer
	line := 0
	for _, nd := range docs {
		name := collapseSpace(nd.Name)
		if name == "" {
			name = "untitled"
		}
		out.WriteString("# " + name + "\n")
		line++
		body := demote(nd.Data)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			body = append(body, '\n')
		}
		body = append(body, closer(body)...)
		out.Write(body)
		n := bytes.Count(body, []byte("\n"))
		parts = append(parts, Part{Name: name, StartLine: line, EndLine: line + n})
		line += n
	}
	return out.Bytes(), parts
}

// demote rewrites one file's section headings a level down, keeping its
// line count so Part can map lines back.
func demote(src []byte) []byte {
	d := Parse(src)
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if end := frontMatterEnd(src); end > 0 {
		last := d.lineOf(end - 1)
		lines[0] = []byte("~~~~yaml\n")
		lines[last-1] = []byte("~~~~\n")
	}
	for _, h := range d.headings {
		if h.Level >= 6 && !h.setext {
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

// closer returns the line that ends a block still open at the end of body,
// or nil. Without it a file ending inside a code fence would hide every
// later file's heading.
func closer(body []byte) []byte {
	probe := append(append([]byte(nil), body...), "\n# probe\n"...)
	probe = parseView(probe)
	root := markdown().Parse(text.NewReader(probe))
	last := root.LastChild()
	if _, ok := last.(*ast.Heading); ok {
		return nil
	}
	for n := last; n != nil; n = n.PreviousSibling() {
		if fc, ok := n.(*ast.FencedCodeBlock); ok {
			start := fc.Pos()
			if start < 0 {
				break
			}
			open := bytes.TrimLeft(probe[start:], " ")
			if n := bytes.IndexFunc(open, func(r rune) bool { return r != rune(open[0]) }); n >= 3 {
				return append(append([]byte(nil), open[:n]...), '\n')
			}
		}
		break
	}
	// Whatever HTML block is open, a line holding every end condition ends
	// it.
	return []byte("--> ?> ]]> </pre></script></style></textarea>\n")
}
