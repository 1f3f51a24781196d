// Package mapreduce answers a question over a text too large for one model
// call, or one whose answer depends on every part of it: split the text into
// parts that each fit a token budget, map a function over the parts in
// parallel, and reduce the partial results, in as many rounds as it takes,
// until one remains.
//
// The package knows nothing of models or prompts. Callers pass a counter, a
// map function and a join function; the budgets they give are what keeps
// every request they build inside its window.
package mapreduce

import (
	"errors"
	"iter"
	"math"
	"strings"
	"unicode/utf8"
)

// Counter counts the tokens of a text (tokens.Counter is one).
type Counter interface {
	Count(s string) int
}

// Part is one piece of a split text. Concatenating the parts' Text in order
// gives the text back exactly.
type Part struct {
	Index int
	Text  string
	// StartLine and EndLine are the 1-based lines of the text the part
	// covers, inclusive. A line too long for the budget is cut into
	// several parts that share its number.
	StartLine, EndLine int
	// Tokens is the sum of the counts of the part's lines (or pieces of a
	// line), or with a Breaker of its runs of lines. Tokenizers merge
	// little across a line break, so it is close to the count of Text, and
	// equal when the part was cut at the Breaker's points; a caller that
	// must stay inside a window counts the request it builds.
	Tokens int
}

// ErrBudget is returned for a budget below one token.
var ErrBudget = errors.New("the token budget must be at least 1")

// Breaker is a Counter that knows where its tokenizer may cut a text
// without changing its count (tokens.Counted is one): Split then counts
// runs of lines between such points rather than each line, so a part's
// Tokens is the count of its Text, and a counter that indexes the text
// answers each run without reading it again.
type Breaker interface {
	Counter
	// CleanBreak reports whether the count of s is the count of s[:at]
	// plus that of s[at:].
	CleanBreak(s string, at int) bool
}

// Split cuts text into parts of at most budget tokens each. It cuts only
// between lines, and prefers to cut before a markdown heading, then after a
// blank line (the end of a paragraph), as long as that keeps the part at
// least half full; a single line over the budget is cut between runes. The
// same text and budget always give the same parts.
//
// Each line is counted once, and each line over the budget once more per
// piece it is cut into, so the cost of Split grows with the text's length.
// With a Breaker the lines are counted in runs that end where it may cut,
// and cut between those runs while a run fits the budget. An empty text
// has no parts.
func Split(text string, budget int, c Counter) ([]Part, error) {
	if budget < 1 {
		return nil, ErrBudget
	}
	// Split reads the text once, front to back, and keeps no record per
	// line: only the few boundaries it may still cut at. A text of ten
	// million short lines held their offsets, units and running sums, 28
	// bytes a line, all at once.
	var parts []Part
	add := func(text string, first, last, tokens int) {
		parts = append(parts, Part{Index: len(parts), Text: text, StartLine: first + 1, EndLine: last + 1, Tokens: tokens})
	}
	// Candidate cuts: before the last heading, after the last blank line.
	var start, heading, blank, cur mark
	heading.unit, blank.unit = -1, -1
	flush := func(end mark) {
		add(text[start.off:end.off], start.line, end.line-1, end.sum-start.sum)
		start = end
		if heading.unit < start.unit {
			heading.unit = -1
		}
		if blank.unit <= start.unit {
			blank.unit = -1
		}
	}
	for u := range units(text, budget, c) {
		n := u.tokens
		next := mark{unit: cur.unit + 1, off: u.end, line: cur.line + u.lines, sum: cur.sum + n}
		if n > budget { // one line over the budget
			if cur.unit > start.unit {
				flush(cur)
			}
			for _, p := range cutLine(text[u.off:u.end], n, budget, c) {
				add(p.text, cur.line, cur.line, p.tokens)
			}
			start, cur = next, next
			heading.unit, blank.unit = -1, -1
			continue
		}
		for cur.unit > start.unit && cur.sum-start.sum+n > budget {
			// Cut at the best boundary that keeps the part at least half
			// full; else just before this unit.
			end := cur
			switch half := start.sum + budget/2; {
			case heading.unit > start.unit && heading.sum >= half:
				end = heading
			case blank.unit > start.unit && blank.sum >= half:
				end = blank
			}
			flush(end)
		}
		if isHeading(lineAt(text, u.off)) {
			heading = cur
		}
		if strings.TrimSpace(text[u.last:u.end]) == "" {
			blank = next
		}
		cur = next
	}
	if cur.unit > start.unit {
		flush(cur)
	}
	return parts, nil
}

// mark is a boundary between two units: the index of the unit after it,
// its byte offset and 0-based line, and the tokens of the units before it.
type mark struct{ unit, off, line, sum int }

// unit is the lines text[off:end] and their count: one line, or with a
// Breaker a run of lines between two points where it may cut. last is
// where its last line starts.
type unit struct{ off, end, last, lines, tokens int }

// units yields text's lines in order, one unit a line; with a Breaker, one
// unit a run of lines between clean breaks, unless the run is over the
// budget, when its lines are counted one by one so that Split can still
// cut between them.
func units(text string, budget int, c Counter) iter.Seq[unit] {
	br, _ := c.(Breaker)
	return func(yield func(unit) bool) {
		for a := 0; a < len(text); {
			b, last, lines := lineEnd(text, a), a, 1
			if br != nil {
				for b < len(text) && !br.CleanBreak(text, b) {
					last, b, lines = b, lineEnd(text, b), lines+1
				}
			}
			if lines > 1 {
				if n := c.Count(text[a:b]); n <= budget {
					if !yield(unit{a, b, last, lines, n}) {
						return
					}
					a = b
					continue
				}
			}
			for i := a; i < b; {
				e := lineEnd(text, i)
				if !yield(unit{i, e, i, 1, min(c.Count(text[i:e]), math.MaxInt32)}) {
					return
				}
				i = e
			}
			a = b
		}
	}
}

// lineEnd returns where the line of text that starts at off ends: after
// its line ending ("\n", "\r\n" or a lone "\r", as the assembler reads
// them), or at the end of text.
func lineEnd(text string, off int) int {
	for i := off; i < len(text); i++ {
		switch text[i] {
		case '\n':
			return i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				return i + 2
			}
			return i + 1
		}
	}
	return len(text)
}

// lineAt returns the line of text that starts at off, with its ending.
func lineAt(text string, off int) string { return text[off:lineEnd(text, off)] }

// isHeading reports whether a line is an ATX markdown heading ("## Title").
func isHeading(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false // indented four spaces: code
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t' || t[n] == '\n' || t[n] == '\r')
}

type piece struct {
	text   string
	tokens int
}

// cutLine cuts one line of n tokens into pieces of at most budget tokens,
// between runes. It guesses the cut from the line's tokens per byte, counts
// each piece once and halves a piece that the guess made too big, so the
// line is counted about twice in all.
func cutLine(line string, n, budget int, c Counter) []piece {
	if n <= budget || utf8.RuneCountInString(line) <= 1 {
		return []piece{{line, n}}
	}
	// A piece of this many bytes holds about 90% of the budget.
	size := max(1, int(float64(len(line))*0.9*float64(budget)/float64(n)))
	var out []piece
	for rest := line; rest != ""; {
		end := runeBoundary(rest, min(size, len(rest)))
		p := rest[:end]
		k := c.Count(p)
		if k > budget && utf8.RuneCountInString(p) > 1 {
			out = append(out, cutLine(p, k, budget, c)...)
		} else {
			out = append(out, piece{p, k})
		}
		rest = rest[end:]
	}
	return out
}

// runeBoundary moves i back to the start of a rune, never to 0.
func runeBoundary(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for j := i; j > 0; j-- {
		if utf8.RuneStart(s[j]) {
			return j
		}
	}
	// The first rune is longer than i bytes: take it whole.
	_, w := utf8.DecodeRuneInString(s)
	return w
}
