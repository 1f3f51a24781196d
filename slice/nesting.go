package slice

import (
	"context"

	"github.com/yuin/goldmark/text"
)

// MaxNesting is how deep block quotes and list items may nest before the
// structure pass reads the rest of the line as text. The block parser's
// work on a line grows with the number of containers open on it times the
// line's indentation, so a document of nested lists (each line one level
// deeper) costs the square of its size without this bound; real documents
// nest a few levels. Only top-level headings open sections, so what is cut
// lies inside a block quote or list item and is never a section heading
// itself; the cut is reported (Document.CappedLines) because it may still
// change where that block ends.
const MaxNesting = 32

// wideIndent bounds the open containers times the indentation of a line;
// past it, the indentation beyond the innermost open list item's content
// (plus the four columns that make it code or continuation text, as before)
// is read as text too.
const wideIndent = 4096

// capNesting returns v with the container markers past MaxNesting levels on
// each line, and indentation past wideIndent, turned into '.' text: v itself
// when nothing needs it, else a copy. It also returns how many lines were
// changed. It is one pass over v and allocates nothing for a document that
// needs no cut.
//
// Which list items are open is estimated from indentation alone (a stack of
// content columns); the estimate errs towards more open items, which only
// makes the cut come sooner on a pathological document.
func capNesting(v []byte) ([]byte, int) {
	var (
		stack     []int // content columns of the list items taken as open
		prevBlank = true
		out       = v
		capped    int
	)
	for start := 0; start < len(v); {
		end := start
		for end < len(v) && v[end] != '\n' {
			end++
		}
		line := v[start:end]
		next := end + 1
		if isBlankLine(line) {
			prevBlank = true
			start = next
			continue
		}
		var cut bool
		stack, cut = capLine(&out, v, start, line, stack, prevBlank)
		if cut {
			capped++
		}
		prevBlank = false
		start = next
	}
	return out, capped
}

// capLine reads one line's container prefix, updates the stack of open list
// items and cuts what lies past the bounds, copying v into *out on the first
// cut. It reports whether it cut anything.
func capLine(out *[]byte, v []byte, at int, line []byte, stack []int, prevBlank bool) ([]int, bool) {
	cut := false
	set := func(i int) {
		if !cut && &(*out)[0] == &v[0] {
			*out = append([]byte(nil), v...)
		}
		cut = true
		(*out)[at+i] = '.'
	}
	i, col, quotes := 0, 0, 0
	first := true
	for {
		// Indentation before the next marker (or the line's text).
		ws, wcol := i, col
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			col = advanceCol(col, line[i])
			i++
		}
		n := listMarker(line[i:])
		isQuote := i < len(line) && line[i] == '>'
		if first {
			// A line that opens a container, or follows a blank line, ends
			// the list items indented deeper than it; any other line may
			// be lazy text of the innermost one and ends none.
			if prevBlank || isQuote || n > 0 {
				for len(stack) > 0 && stack[len(stack)-1] > col {
					stack = stack[:len(stack)-1]
				}
			}
			first = false
		}
		depth := len(stack) + quotes
		if depth*(col-wcol) > wideIndent {
			limit := 4
			if len(stack) > 0 {
				limit = stack[len(stack)-1] + 4
			}
			c := wcol
			for j := ws; j < i; j++ {
				if c >= limit {
					set(j)
				}
				c = advanceCol(c, line[j])
			}
			if cut {
				return stack, true
			}
		}
		if !isQuote && n == 0 {
			return stack, cut
		}
		if depth >= MaxNesting {
			set(i)
			return stack, true
		}
		if isQuote {
			quotes++
			i++
			col++
			continue
		}
		i += n
		col += n
		// The item's content starts after one to four spaces; more make
		// its first line code, one column in.
		sp, scol := i, col
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') && col-scol < 5 {
			col = advanceCol(col, line[i])
			i++
		}
		if col-scol > 4 || i == len(line) {
			i, col = sp, scol+1
		}
		stack = append(stack, col)
	}
}

func advanceCol(col int, b byte) int {
	if b == '\t' {
		return col + 4 - col%4
	}
	return col + 1
}

// listMarker returns the length of the list item marker at the start of b
// ("-", "*", "+", or up to nine digits and '.' or ')'), followed by a space,
// a tab or the line's end; 0 when there is none.
func listMarker(b []byte) int {
	n := 0
	switch {
	case len(b) > 0 && (b[0] == '-' || b[0] == '*' || b[0] == '+'):
		n = 1
	default:
		for n < len(b) && n < 9 && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(b) || (b[n] != '.' && b[n] != ')') {
			return 0
		}
		n++
	}
	if n < len(b) && b[n] != ' ' && b[n] != '\t' && b[n] != '\r' {
		return 0
	}
	return n
}

func isBlankLine(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// cancelReader ends the document early once ctx is cancelled: every
// checkEvery lines it looks, and when it must stop it moves to the end of
// the source, where the parser finds no more lines and closes its blocks as
// at the real end.
type cancelReader struct {
	text.Reader
	ctx   context.Context
	lines int
}

const checkEvery = 256

func (r *cancelReader) AdvanceLine() {
	r.Reader.AdvanceLine()
	r.lines++
	if r.lines%checkEvery == 0 && r.ctx.Err() != nil {
		r.toEnd()
	}
}

func (r *cancelReader) SkipBlankLines() (text.Segment, int, bool) {
	if r.ctx.Err() != nil {
		r.toEnd()
	}
	return r.Reader.SkipBlankLines()
}

func (r *cancelReader) toEnd() {
	n := len(r.Source())
	line, _ := r.Position()
	r.SetPosition(line, text.NewSegment(n, n))
}
