package slice

import "bytes"

// MDX. An MDX page (Docusaurus, Nextra, Mintlify, Storybook) mixes markdown
// with JSX components on lines of their own ("<Tabs>", "<Note type="x">",
// "</TabItem>", "<Step title="a" />", fragments "<>" and "</>"). MDX reads
// the markdown between them as markdown, but CommonMark reads such a line as
// the start of an HTML block (type 7) that runs to the next blank line, so a
// heading right after "<TabItem value="linux">" or "</Note>" would be
// swallowed as HTML. The structure pass reads such lines as blank: the
// headings between them are found, and nothing is lost, since the section
// text is always cut from the document itself. Only component tags (a
// capitalised name, as JSX requires of components) and fragments are blanked:
// lower-case HTML keeps its CommonMark meaning, and the import/export lines
// at the top are ordinary paragraphs that hide nothing.

// blankJSXLines returns v with every line that is one JSX component tag
// turned into spaces (line breaks kept, so offsets and lines are unchanged):
// v itself when there is none, else a copy. It is one pass over v.
func blankJSXLines(v []byte) []byte {
	out := v
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
		if (start == 0 || v[start-1] == '\n') && isJSXTagLine(v[i:end]) {
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
