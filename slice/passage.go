package slice

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dev/baton/tokens"
)

// The passage index cuts a document into short, self-contained passages a
// pointer can name ("p17", "p18-p20") where headings cannot help: text with
// no structure (a transcript, a PDF's text, a one-line biography) or a
// section too large to be useful whole.
//
// A passage holds at most MaxPassageBytes bytes, about 400–500 tokens of
// English prose, and, unless its section or the document ends first, at
// least MinPassageBytes. It is cut at the last paragraph break that keeps it
// under the bound, else at the last sentence end, else at the last space,
// and only in a run with no space at all between two UTF-8 characters; a
// heading's line always starts a passage, so a passage never straddles two
// sections. The passages tile the document: each starts where the one
// before it ends, so every byte belongs to exactly one passage and the ids
// do not depend on who asks.
const (
	MaxPassageBytes = 2000
	MinPassageBytes = 1000
)

// Passage is one entry of the passage index.
type Passage struct {
	ID string `json:"id"` // "p1" for the first passage of the document
	// Start and End are the passage's bytes in the document, End
	// exclusive; Line and EndLine its first and last lines, 1-indexed.
	Start   int    `json:"start_byte"`
	End     int    `json:"end_byte"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	Tokens  int    `json:"tokens"`
	Lead    string `json:"lead"` // its first words
}

// passageState is the passage index a Document builds on first use.
type passageState struct {
	linesOnly bool // made by LinesOnly: headings not parsed
	spanOnce  sync.Once
	spans     [][2]int
	passOnce  sync.Once
	passages  []Passage
}

// leadWords bounds a passage's lead.
const leadWords = 12

// Passages returns the document's passage index, in document order, each
// passage counted with the default encoding. It is built once per
// document; the slice is a copy.
func (d *Document) Passages() []Passage { return d.PassagesCounted(tokens.Default().Count) }

// PassagesCounted is Passages with each passage's Tokens given by count: a
// caller that has the document counted already (a run's indexed context)
// sizes the passages from that count instead of reading the document again.
func (d *Document) PassagesCounted(count func(string) int) []Passage {
	d.passOnce.Do(func() {
		spans := d.passageIndex()
		d.passages = make([]Passage, len(spans))
		for i, s := range spans {
			text := d.text[s[0]:s[1]]
			d.passages[i] = Passage{
				ID: PassageID(i + 1), Start: s[0], End: s[1],
				Line: d.lineOf(s[0]), EndLine: d.lineOf(max(s[1]-1, s[0])),
				Lead: lead(text),
			}
		}
	})
	out := append([]Passage(nil), d.passages...)
	for i := range out {
		out[i].Tokens = count(d.text[out[i].Start:out[i].End])
	}
	return out
}

// PassageID is the id of the n-th passage, counted from 1.
func PassageID(n int) string { return "p" + strconv.Itoa(n) }

// passageSpans cuts the document into the index's byte spans. A Document
// made by LinesOnly knows no headings, so they are found here: the ids must
// be the same whichever way the document was read.
func (d *Document) passageSpans() [][2]int {
	heads := d.headings
	if d.linesOnly {
		heads = ParseString(d.text).headings
	}
	var bounds []int // byte offsets where a heading's line starts
	for _, h := range heads {
		if off := d.LineStart(h.Line); off > 0 {
			bounds = append(bounds, off)
		}
	}
	text := d.text
	var spans [][2]int
	for start, next := 0, 0; start < len(text); {
		for next < len(bounds) && bounds[next] <= start {
			next++
		}
		end := len(text)
		if next < len(bounds) {
			end = bounds[next]
		}
		if end-start > MaxPassageBytes {
			end = cutPassage(text, start, start+MaxPassageBytes)
		}
		spans = append(spans, [2]int{start, end})
		start = end
	}
	// Trailing white space is no passage of its own.
	if n := len(spans); n > 1 && strings.TrimSpace(text[spans[n-1][0]:spans[n-1][1]]) == "" {
		spans[n-2][1] = spans[n-1][1]
		spans = spans[:n-1]
	}
	return spans
}

// cutPassage returns where a passage that starts at start and may run to
// limit ends: after the last paragraph break past the minimum, else after
// the last sentence end, else after the last space, else at the last UTF-8
// character boundary before limit. It reads at most limit-start bytes.
func cutPassage(text string, start, limit int) int {
	lo := start + MinPassageBytes
	window := text[lo:limit]
	if i := strings.LastIndex(window, "\n\n"); i >= 0 {
		return skipSpace(text, lo+i, limit)
	}
	if i := strings.LastIndex(window, "\r\n\r\n"); i >= 0 {
		return skipSpace(text, lo+i, limit)
	}
	if i := lastSentenceEnd(window); i >= 0 {
		return skipSpace(text, lo+i, limit)
	}
	if i := strings.LastIndexFunc(window, unicode.IsSpace); i >= 0 {
		// Back to the start of the run of spaces, then past all of it.
		for i > 0 && isSpaceByte(window[i-1]) {
			i--
		}
		return skipSpace(text, lo+i, limit)
	}
	end := limit
	for end > start+1 && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}

// skipSpace returns the offset after the white space at i, no further than
// limit: a passage ends with the space after it, the next starts at a word.
func skipSpace(text string, i, limit int) int {
	for i < limit && isSpaceByte(text[i]) {
		i++
	}
	return i
}

func isSpaceByte(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// lastSentenceEnd returns the offset in s just after the last sentence's
// closing punctuation ('.', '!' or '?', with any closing quotes or
// brackets) that is followed by white space and a capital, a digit or an
// opening quote; -1 when there is none.
func lastSentenceEnd(s string) int {
	for i := len(s) - 2; i > 0; i-- {
		if !isSpaceByte(s[i]) {
			continue
		}
		j := i
		for j > 0 && strings.IndexByte(`"')]”’`, s[j-1]) >= 0 {
			j--
		}
		if j == 0 || strings.IndexByte(".!?", s[j-1]) < 0 {
			continue
		}
		k := i
		for k < len(s) && isSpaceByte(s[k]) {
			k++
		}
		if k == len(s) {
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[k:])
		if unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune(`"'“‘(`, r) {
			return i
		}
	}
	return -1
}

// lead is the first words of a passage, for an outline.
func lead(text string) string {
	words := strings.Fields(text[:min(len(text), 400)])
	if len(words) > leadWords {
		words = append(words[:leadWords], "…")
	}
	return strings.Join(words, " ")
}

// passageRef reads "p17", "p18-p20" or "p18-20" (case and spacing aside,
// any dash) as a first and last passage number.
var passageRef = regexp.MustCompile(`^\s*[pP]\s*(\d{1,9})\s*(?:(?:-|–|—|\.\.)\s*[pP]?\s*(\d{1,9})\s*)?$`)

// matchPassage resolves one passage pointer against the index.
func (d *Document) matchPassage(ptr string) (Match, string, bool) {
	m := passageRef.FindStringSubmatch(ptr)
	if m == nil {
		return Match{}, fmt.Sprintf("passage %q matched nothing (a passage is named p1, p2, … or a range such as p3-p5)", ptr), false
	}
	a, _ := strconv.Atoi(m[1])
	b := a
	if m[2] != "" {
		b, _ = strconv.Atoi(m[2])
	}
	ps := d.passageIndex()
	switch {
	case a > b:
		return Match{}, fmt.Sprintf("passage %q matched nothing (the range is reversed)", ptr), false
	case len(ps) == 0:
		return Match{}, fmt.Sprintf("passage %q matched nothing (the document is empty)", ptr), false
	case a < 1 || a > len(ps):
		return Match{}, fmt.Sprintf("passage %q matched nothing (the document has passages p1-p%d)", ptr, len(ps)), false
	}
	b = min(b, len(ps))
	first, last := ps[a-1], ps[b-1]
	return Match{
		Pointer: ptr, StartLine: d.lineOf(first[0]), EndLine: d.lineOf(max(last[1]-1, last[0])),
		Kind: KindPassage, Bytes: &[2]int{first[0], last[1]},
	}, "", true
}

// PassageSpans is the byte span of each passage, Passages without the
// token counts and leads (which cost a pass of the tokenizer): span i is
// passage "p<i+1>". The slice is the document's own: do not change it.
func (d *Document) PassageSpans() [][2]int { return d.passageIndex() }

// passageIndex is the passages' spans without their token counts, which
// Extract does not need.
func (d *Document) passageIndex() [][2]int {
	d.spanOnce.Do(func() { d.spans = d.passageSpans() })
	return d.spans
}
