package slice

import "bytes"

// isMDXHTMLLine reports whether line (from its '<', without the line break)
// is, as MDX reads it, a JSX element line that hides no heading: all tags,
// or one element from its opening tag to its own closing tag, none of them
// a heading element, not opening <pre>, <script>, <style> or <textarea>.
func isMDXHTMLLine(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	var first, last []byte // names of the first and last tags
	firstOpens, lastCloses, text, trailing := false, false, false, false
	for pos := 0; pos < len(t); {
		if t[pos] != '<' {
			next := bytes.IndexByte(t[pos:], '<')
			if next < 0 {
				next = len(t) - pos
			}
			if len(bytes.TrimSpace(t[pos:pos+next])) > 0 {
				text, trailing = true, true
			}
			pos += next
			continue
		}
		name, closing, end, ok := readTag(t[pos:])
		if !ok || isHeadingName(name) {
			return false
		}
		if first == nil {
			first, firstOpens = name, !closing
		}
		last, lastCloses, trailing = name, closing, false
		pos += end
	}
	if first == nil || rawTextTags[string(bytes.ToLower(first))] {
		return false
	}
	return !text || firstOpens && lastCloses && !trailing && bytes.EqualFold(first, last)
}

// readTag reads the tag at the start of t: its name, whether it is a
// closing tag, and the length up to and including its '>' (quoted values
// may hold '>'). A comment, a declaration or an unclosed tag is no tag.
func readTag(t []byte) (name []byte, closing bool, end int, ok bool) {
	n := 1
	if n < len(t) && t[n] == '/' {
		closing = true
		n++
	}
	from := n
	for n < len(t) && (isASCIILetter(t[n]) || n > from && (t[n] >= '0' && t[n] <= '9' || t[n] == '-' || t[n] == '.' || t[n] == '_')) {
		n++
	}
	if n == from || n < len(t) && t[n] != ' ' && t[n] != '\t' && t[n] != '>' && t[n] != '/' {
		return nil, false, 0, false
	}
	var quote byte
	for i := n; i < len(t); i++ {
		switch c := t[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return t[from:n], closing, i + 1, true
		}
	}
	return nil, false, 0, false
}

// isHeadingName reports whether name is h1 to h6, in either case.
func isHeadingName(name []byte) bool {
	return len(name) == 2 && name[0]|0x20 == 'h' && name[1] >= '1' && name[1] <= '6'
}

// rawTextTags hold text that is not markdown (CommonMark's HTML blocks of
// type 1), so MDX pages keep their CommonMark reading.
var rawTextTags = map[string]bool{"pre": true, "script": true, "style": true, "textarea": true}
