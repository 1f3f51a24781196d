package slice

import "bytes"

// The parser keeps a record of every line of the block it is in, 24 bytes
// a line, until the block ends (goldmark's parseBlocks): a paragraph of
// five million one-letter lines held 120 MB in that record, and 270 MB
// while it grew, the peak of a dry run. foldPlainRuns hands the parser
// such a paragraph in fewer lines. It joins lines of letters and digits
// alone into one, a space where each line break was, so offsets and the
// lines they map to do not change.
//
// Only lines that change nothing are joined. A line of letters and digits
// opens no block but a paragraph, continues a paragraph, and ends no code
// or HTML block, so joining some of them gives the same blocks. The run
// must follow a blank line or open the document, so that its first line,
// kept, opens any paragraph it is in, which then cannot open a link
// reference definition; paragraphTrim keeps the first line of such a
// paragraph and its last lines, at least 4,097 and fewer than 8,192 of
// them, and drops 4,095 lines at a time. So the last foldKeep lines of a run
// are never joined, and each join makes foldGroup lines one: the
// paragraph keeps the same lines, and a setext heading made of it the same
// title.
func foldPlainRuns(v []byte) []byte {
	if len(v) == 0 {
		return v
	}
	out := v
	prevBlank := true // the start of the document
	for off := 0; off < len(v); {
		if !prevBlank || !plainLine(v, off) {
			end := lineEndAt(v, off)
			prevBlank = isBlankBytes(v[off:end])
			off = end
			continue
		}
		runStart, lines, end := off, 0, off
		for end < len(v) && plainLine(v, end) {
			end, lines = lineEndAt(v, end), lines+1
		}
		if groups := (lines - 1 - foldKeep) / foldGroup; groups > 0 {
			if &out[0] == &v[0] {
				out = bytes.Clone(v)
			}
			foldRun(out, lineEndAt(v, runStart), groups)
		}
		prevBlank, off = false, end
	}
	return out
}

const (
	// foldGroup is how many lines one join makes one: paragraphTrim drops
	// foldGroup-1 lines at a time, so a paragraph ends with the same
	// number kept.
	foldGroup = maxParagraphLines
	// foldKeep is how many last lines of a run stay as they are: more
	// than paragraphTrim ever keeps.
	foldKeep = 2 * maxParagraphLines
)

// foldRun joins groups runs of foldGroup lines from off, each into one.
func foldRun(v []byte, off, groups int) {
	for range groups {
		for range foldGroup - 1 {
			i := off + bytes.IndexByte(v[off:], '\n')
			v[i] = ' '
			off = i + 1
		}
		off = lineEndAt(v, off)
	}
}

// plainLine reports whether the line at off is one or more ASCII letters
// and digits ended by '\n'.
func plainLine(v []byte, off int) bool {
	i := off
	for i < len(v) && (v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z' || v[i] >= '0' && v[i] <= '9') {
		i++
	}
	return i > off && i < len(v) && v[i] == '\n'
}

// lineEndAt returns the offset after the '\n' that ends the line at off,
// or len(v).
func lineEndAt(v []byte, off int) int {
	if i := bytes.IndexByte(v[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(v)
}

// isBlankBytes reports whether line is only spaces, tabs and line endings.
func isBlankBytes(line []byte) bool {
	return len(bytes.Trim(line, " \t\r\n")) == 0
}

// parserView is what the parser reads of a parse view; tests set it to
// compare a parse without folds.
var parserView = foldPlainRuns
