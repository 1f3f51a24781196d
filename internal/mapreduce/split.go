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
	// The lines are kept as their offsets alone: a text of ten million
	// short lines held a string header and more for each.
	offsets := lineOffsets(text)
	line := func(i int) string { return text[offsets[i]:offsets[i+1]] }
	// join returns lines a to b-1 as one string: a substring of text, so
	// no part copies the text.
	join := func(a, b int) string { return text[offsets[a]:offsets[b]] }
	units := lineUnits(text, offsets, budget, c)

	var parts []Part
	add := func(text string, first, last, tokens int) {
		parts = append(parts, Part{Index: len(parts), Text: text, StartLine: first + 1, EndLine: last + 1, Tokens: tokens})
	}
	prefix := make([]int, len(units)+1) // prefix[i]: tokens of units[:i]
	for i, u := range units {
		prefix[i+1] = prefix[i] + int(u.tokens)
	}
	start := 0
	lastHeading, lastBlank := -1, -1 // candidate cuts: before unit lastHeading, after unit lastBlank
	flush := func(end int) {
		a, b := int(units[start].a), int(units[end-1].b)
		add(join(a, b), a, b-1, prefix[end]-prefix[start])
		start = end
		if lastHeading < start {
			lastHeading = -1
		}
		if lastBlank < start {
			lastBlank = -1
		}
	}
	for i := 0; i < len(units); i++ {
		u := units[i]
		n := int(u.tokens)
		if n > budget { // one line over the budget
			if i > start {
				flush(i)
			}
			for _, p := range cutLine(line(int(u.a)), n, budget, c) {
				add(p.text, int(u.a), int(u.a), p.tokens)
			}
			start, lastHeading, lastBlank = i+1, -1, -1
			continue
		}
		for i > start && prefix[i]-prefix[start]+n > budget {
			// Cut at the best boundary that keeps the part at least half
			// full; else just before this unit.
			end := i
			switch half := prefix[start] + budget/2; {
			case lastHeading > start && prefix[lastHeading] >= half:
				end = lastHeading
			case lastBlank >= start && prefix[lastBlank+1] >= half:
				end = lastBlank + 1
			}
			flush(end)
		}
		if isHeading(line(int(u.a))) {
			lastHeading = i
		}
		if strings.TrimSpace(line(int(u.b)-1)) == "" {
			lastBlank = i
		}
	}
	if start < len(units) {
		flush(len(units))
	}
	return parts, nil
}

// unit is the lines [a, b) of a text and their count: one line, or with a
// Breaker a run of lines between two points where it may cut.
type unit struct {
	a, b   int32 // a text has fewer than 2^31 lines: it is held in memory
	tokens int32 // one line's count, at most its length
}

// lineUnits counts text's lines, one unit a line; with a Breaker, one unit
// a run of lines between clean breaks, unless the run is over the budget,
// when its lines are counted one by one so that Split can still cut
// between them.
func lineUnits(text string, offsets []int, budget int, c Counter) []unit {
	br, _ := c.(Breaker)
	nlines := len(offsets) - 1
	// At most a unit a line, sized once: grown a quarter at a time, the
	// copies of ten million units came to five times their size.
	units := make([]unit, 0, nlines)
	for a := 0; a < nlines; {
		b := a + 1
		if br != nil {
			for b < nlines && !br.CleanBreak(text, offsets[b]) {
				b++
			}
		}
		if b > a+1 {
			if n := c.Count(text[offsets[a]:offsets[b]]); n <= budget {
				units = append(units, unit{int32(a), int32(b), int32(n)})
				a = b
				continue
			}
		}
		for i := a; i < b; i++ {
			units = append(units, unit{int32(i), int32(i + 1), int32(min(c.Count(text[offsets[i]:offsets[i+1]]), math.MaxInt32))})
		}
		a = b
	}
	return units
}

// lineOffsets returns where each line of text starts, and then len(text):
// lines end after each line ending ("\n", "\r\n" or a lone "\r", as the
// assembler reads them), and keep their endings. It is sized once.
func lineOffsets(text string) []int {
	n := strings.Count(text, "\n") + strings.Count(text, "\r") + 2
	out := make([]int, 1, n)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out = append(out, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			out = append(out, i+1)
		}
	}
	if out[len(out)-1] < len(text) {
		out = append(out, len(text))
	}
	return out
}

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
