package slice

import (
	"regexp"
	"strings"
	"unicode"
)

// Plain-text headings. A document with no markdown heading (a text file, a
// transcript, a PDF's text) often still has titles a reader sees: numbered
// ("1.2 Results", "Section 4.", "Chapter 3: Costs") or in capitals
// ("FINDINGS"). They are recognised only in a document where markdown
// found no heading, so a markdown document's structure never changes, and
// only in a form that ordinary prose does not take:
//
//   - a line of its own, after a blank line (or at the start), of at most
//     maxPlainWords words and maxPlainBytes bytes, not ending like a
//     sentence or a clause (".", ",", ";", "?", "!"; "Section 4." and
//     "1." after a number are numbering);
//   - numbered: "1", "1.2", "1.2.3" with an optional '.' and a title that
//     starts with a capital, or a label ("Section", "Chapter", "Part",
//     "Appendix") and a number, numeral or letter; the next line of text is
//     not itself such a line (that is a list);
//   - or in capitals: at least four letters, none of them lower case, and
//     starting with a letter or a digit (not a quote, a list or a table);
//   - and at least two such lines in the document: one line in capitals is
//     more often emphasis than structure.
//
// Run-in titles ("Early life. Picardo was born…") are not headings: they
// cannot be told reliably from a short first sentence, and the passage
// index covers such text.
const (
	maxPlainWords = 12
	maxPlainBytes = 90
	minPlainHeads = 2
)

var (
	plainNumbered = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3}){0,4})\.?\s+(\S.*)$`)
	plainLabelled = regexp.MustCompile(`^(?i:section|chapter|part|appendix)\s+(\d{1,3}(?:\.\d{1,3}){0,4}|[IVXLC]{1,6}|[A-Z])\b[.:]?(?:\s+(\S.*))?$`)
)

// plainHeadings finds plain-text headings in a document without markdown
// ones, with their levels, paths and ancestors; EndLine is left to Parse.
func (d *Document) plainHeadings(src []byte) []Heading {
	var found []Heading
	n := d.NumLines()
	fence := ""
	prevBlank := true
	for line := 1; line <= n; line++ {
		t := strings.TrimSpace(string(d.lineBytes(src, line)))
		if f := fenceOf(t); f != "" && (fence == "" || strings.HasPrefix(t, fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
			prevBlank = false
			continue
		}
		blank := t == ""
		if fence == "" && prevBlank && !blank {
			if level, title, ok := plainHeading(t); ok && !d.listFollows(src, line, n) {
				found = append(found, Heading{Level: level, Title: title, Line: line, rawEnd: line, plain: true})
			}
		}
		prevBlank = blank
	}
	if len(found) < minPlainHeads {
		return nil
	}
	var stack []int
	for i := range found {
		h := &found[i]
		for len(stack) > 0 && found[stack[len(stack)-1]].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		h.Path = make([]string, 0, len(stack))
		for _, j := range stack {
			h.Path = append(h.Path, found[j].Title)
		}
		h.anc = append([]int(nil), stack...)
		stack = append(stack, i)
	}
	return found
}

// fenceOf is the fence a line opens or closes ("```", "~~~"), or "".
func fenceOf(t string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return f
		}
	}
	return ""
}

// listFollows reports whether the next line with text after line is
// numbered too: then line is the first item of a list, not a heading.
func (d *Document) listFollows(src []byte, line, n int) bool {
	for next := line + 1; next <= n; next++ {
		t := strings.TrimSpace(string(d.lineBytes(src, next)))
		if t == "" {
			continue
		}
		return plainNumbered.MatchString(t) || plainLabelled.MatchString(t)
	}
	return false
}

// plainHeading reads one trimmed line as a plain-text heading: its level
// and title.
func plainHeading(t string) (int, string, bool) {
	if len(t) > maxPlainBytes || len(strings.Fields(t)) > maxPlainWords {
		return 0, "", false
	}
	// A quote, a table row, a list item, markup: not a title.
	if r := []rune(t)[0]; !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return 0, "", false
	}
	if m := plainLabelled.FindStringSubmatch(t); m != nil {
		if m[2] != "" && endsLikeSentence(m[2]) {
			return 0, "", false
		}
		return 1 + strings.Count(m[1], "."), strings.TrimRight(t, ".:"), true
	}
	if m := plainNumbered.FindStringSubmatch(t); m != nil {
		r := []rune(m[2])[0]
		if !unicode.IsUpper(r) || endsLikeSentence(m[2]) {
			return 0, "", false
		}
		return 1 + strings.Count(m[1], "."), t, true
	}
	if endsLikeSentence(t) {
		return 0, "", false
	}
	letters := 0
	for _, r := range t {
		if unicode.IsLower(r) {
			return 0, "", false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < 4 {
		return 0, "", false
	}
	return 1, t, true
}

func endsLikeSentence(s string) bool {
	return strings.ContainsAny(s[len(s)-1:], ".,;?!")
}
