package slice

import (
	"bytes"
	"context"
	"path"
	"regexp"
	"strings"
)

// MDX. An MDX page (Docusaurus, Nextra, Mintlify, Storybook) mixes markdown
// with JSX components on lines of their own ("<Tabs>", "<Note type="x">",
// "</TabItem>", "<Step title="a" />", fragments "<>" and "</>"). MDX reads
// the markdown between them as markdown, but CommonMark reads such a line as
// the start of an HTML block (type 7) that runs to the next blank line, so a
// heading right after "<TabItem value="linux">" or "</Note>" would be
// swallowed as HTML. The structure pass reads such lines as blank: the
// headings between them are found, and nothing is lost, since the section
// text is always cut from the document itself. Component tags (a
// capitalised name, as JSX requires of components) and fragments are
// blanked in any document, as markdown has no use for them.
//
// MDX also reads lower-case HTML ("<div align="center">", "<details>",
// "<summary>Older</summary>") as JSX elements whose lines between are
// markdown, where CommonMark opens an HTML block (type 6) that hides the
// headings up to the next blank line. So in an MDX page, and only there, a
// line that is all tags, or one element from its opening tag to its closing
// one, is read as blank too. Heading elements stay (they are headings), and
// so do <pre>, <script>, <style> and <textarea>, whose content is not
// markdown. A page is MDX when its first line after front matter and blank
// lines is an ESM import or export, which MDX alone allows there, since the
// text of one document comes without its file name. In several documents
// joined by Combine, a part is MDX when its "# name" heading names an .mdx
// file or its own top is such a line. A markdown file keeps CommonMark's
// reading, and so does a lone MDX page without an import or export at its
// top: the callers that parse one document again (a remote worker, the MCP
// tools) know its text, not always its name, and every parse of a text must
// find the same headings.

// mdxView returns v as the structure pass reads it: component lines blank
// in any document, and lower-case HTML lines blank in an MDX page (mdx set,
// or told by v's top) or in the parts of v that are .mdx files.
func mdxView(v []byte, mdx bool) []byte {
	return blankJSXLines(v, mdx || isMDX(v), mdxParts(v))
}

// ParseNamed is ParseString of a document whose file name is known: a file
// named *.mdx is read as an MDX page whatever its top holds. The part of a
// combined document is parsed so, by its name, to read as it does in the
// whole.
func ParseNamed(name, s string) *Document {
	d, _ := parseContext(context.Background(), s, isMDXName(name))
	return d
}

// isMDXName reports whether a file name is an MDX page's.
func isMDXName(name string) bool {
	return strings.EqualFold(path.Ext(name), ".mdx")
}

// mdxPart is where a part of a combined document starts, at its "# name"
// heading, and whether it is an MDX page.
type mdxPart struct {
	at  int
	mdx bool
}

// docExts are the kinds of files Combine joins whose "# name" lines start
// a part; a heading "# Using node.js" starts none.
var docExts = map[string]bool{
	".md": true, ".markdown": true, ".mdown": true, ".mkd": true, ".mdx": true,
	".txt": true, ".text": true, ".rst": true, ".adoc": true,
}

// mdxParts returns the parts of v, in order, when v was joined by Combine:
// every line "# name" at the start of a line whose name (escapes removed)
// ends with a document's extension. A part is MDX by its name, or by its top
// as a lone document is, so that a part parsed alone (ParseNamed) reads as
// it does in the whole.
func mdxParts(v []byte) []mdxPart {
	var out []mdxPart
	for at := 0; at < len(v); {
		i := at
		if at > 0 || !bytes.HasPrefix(v, []byte("# ")) {
			j := bytes.Index(v[at:], []byte("\n# "))
			if j < 0 {
				break
			}
			i = at + j + 1
		}
		line, body, _ := bytes.Cut(v[i+2:], []byte("\n"))
		name := strings.ToLower(strings.ReplaceAll(string(bytes.TrimSpace(line)), `\`, ""))
		if docExts[path.Ext(name)] {
			out = append(out, mdxPart{at: i, mdx: isMDXName(name) || isMDX(body)})
		}
		at = i + 2
	}
	return out
}

// esmLine is an import or export statement's start, as MDX pages write them
// ("import Tabs from '@theme/Tabs';", "import './a.css'", "export const x").
var esmLine = regexp.MustCompile(`^[ \t]*(?:import[ \t]+(?:['"{*]|[\w$]+[ \t]*,|[\w$]+[ \t]+from[ \t]+['"])|export[ \t]+(?:(?:const|let|var|function|async|class|default)\b|[{*]))`)

// isMDX reports whether v's first line after front matter, blank lines and
// component lines is an ESM import or export. The component lines, which
// the structure pass reads as blank, are passed over so that its reading of
// v, blanked or not, is one.
func isMDX(v []byte) bool {
	rest := v[frontMatterEnd(v):]
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 && !(t[0] == '<' && isJSXTagLine(t)) {
			return esmLine.Match(line)
		}
		rest = after
	}
	return false
}

// blankJSXLines returns v with every line that is one JSX component tag
// (or, where v is MDX, an HTML line as MDX reads it) turned into spaces,
// line breaks kept so offsets and lines are unchanged: v itself when there
// is none, else a copy. It is one pass over v. v is MDX from its start when
// mdx is set, and from each of parts on as that part says. Lines inside a
// heading element spread over lines are kept, so the element is read whole.
func blankJSXLines(v []byte, mdx bool, parts []mdxPart) []byte {
	out := v
	// The last line start that opens a heading element, and the offset of
	// its closing tag (0: none), found only when a line would be blanked.
	open, held, hold := -1, -1, 0
	for at := 0; at < len(v); {
		i := bytes.IndexByte(v[at:], '<')
		if i < 0 {
			break
		}
		i += at
		start := i
		for start > 0 && (v[start-1] == ' ' || v[start-1] == '\t') {
			start--
		}
		end := i + bytes.IndexByte(v[i:], '\n')
		if end < i {
			end = len(v)
		}
		for len(parts) > 0 && parts[0].at < i {
			mdx, parts = parts[0].mdx, parts[1:]
		}
		switch {
		case start > 0 && v[start-1] != '\n':
		case i+2 < len(v) && v[i+1]|0x20 == 'h' && v[i+2] >= '1' && v[i+2] <= '6':
			open = i
		case isJSXTagLine(v[i:end]) || mdx && isMDXHTMLLine(v[i:end]):
			if open >= 0 && held != open {
				held, hold = open, headingElementEnd(v, open)
			}
			if start < hold {
				break // inside a heading element
			}
			if &out[0] == &v[0] {
				out = bytes.Clone(v)
			}
			for k := start; k < end; k++ {
				if out[k] != '\r' {
					out[k] = ' '
				}
			}
		}
		at = end
		if at == i {
			at++
		}
	}
	return out
}

// headingElementEnd is, when v[i:] opens a heading element, the offset of
// its closing tag within the bound htmlHeadings reads it in (its first
// htmlHeadingSpan lines and htmlHeadingBytes bytes); else 0.
func headingElementEnd(v []byte, i int) int {
	if i+3 > len(v) || v[i+1]|0x20 != 'h' || v[i+2] < '1' || v[i+2] > '6' {
		return 0
	}
	limit, end := min(len(v), i+htmlHeadingBytes), i
	for n := 0; n < htmlHeadingSpan && end < limit; n++ {
		nl := bytes.IndexByte(v[end:limit], '\n')
		if nl < 0 {
			end = limit
			break
		}
		end += nl + 1
	}
	c := indexFold(v[i+3:end], []byte{'<', '/', 'h', v[i+2]})
	if c < 0 {
		return 0
	}
	return i + 3 + c
}

// isJSXTagLine reports whether line (from its '<', without the line break)
// is a component's opening, closing or self-closing tag, or a fragment, and
// nothing after it.
func isJSXTagLine(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	if len(t) < 2 || t[len(t)-1] != '>' {
		return false
	}
	name := t[1:]
	if name[0] == '/' {
		name = name[1:]
	}
	if len(name) > 0 && name[0] == '>' {
		return len(name) == 1 // "<>" or "</>"
	}
	if len(name) == 0 || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	n := 1
	for n < len(name) && (isASCIILetter(name[n]) || name[n] >= '0' && name[n] <= '9' || name[n] == '.' || name[n] == '_') {
		n++
	}
	// The name ends the tag or is followed by attributes; one '>' ends it
	// (quoted values aside), as tagAloneOnLine checks.
	rest := name[n:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '>' && rest[0] != '/' {
		return false
	}
	return tagAloneOnLine(rest)
}
