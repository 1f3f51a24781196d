package bench

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// The plain BM25 baseline of the long-document benchmark, written apart
// from baton's planner on purpose (no code of plan or slice): the document
// cut into fixed windows of baselineWords words, each window scored against
// the question with textbook Okapi BM25 (k1 1.2, b 0.75, no stemming, a
// short stopword list), and the best windows taken until the next would
// pass the token budget.
const baselineWords = 100

// baselineChunk is one window: its byte span in the document and its words.
type baselineChunk struct {
	start, end int
	words      []string
}

// baselineChunks cuts text into windows of baselineWords words; a window
// ends where its last word ends, the next starts at its first word.
func baselineChunks(text string) []baselineChunk {
	var out []baselineChunk
	var cur baselineChunk
	n := 0
	inWord, wordStart := false, 0
	flush := func(end int) {
		if n > 0 {
			cur.end = end
			out = append(out, cur)
		}
		cur, n = baselineChunk{start: end}, 0
	}
	for i, r := range text + " " {
		space := unicode.IsSpace(r)
		switch {
		case !space && !inWord:
			inWord, wordStart = true, i
			if n == 0 {
				cur.start = i
			}
		case space && inWord:
			inWord = false
			cur.words = append(cur.words, baselineTerms(text[wordStart:i])...)
			n++
			if n == baselineWords {
				flush(i)
			}
		}
	}
	flush(len(text))
	return out
}

var baselineStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by did do does for from had has have he her his how
		in is it its of on or she that the their they this to was were what when where which who whom why will with`) {
		baselineStop[w] = true
	}
}

// baselineTerms lowercases and splits on anything but letters and digits.
func baselineTerms(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !baselineStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// baselineRank returns the chunks' indexes, best BM25 score for the
// question first (ties in document order).
func baselineRank(chunks []baselineChunk, question string) []int {
	df := map[string]int{}
	total := 0
	for _, c := range chunks {
		seen := map[string]bool{}
		for _, w := range c.words {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
		total += len(c.words)
	}
	avg := float64(total) / float64(max(len(chunks), 1))
	q := baselineTerms(question)
	scores := make([]float64, len(chunks))
	for i, c := range chunks {
		tf := map[string]int{}
		for _, w := range c.words {
			tf[w]++
		}
		norm := 1 - 0.75 + 0.75*float64(len(c.words))/avg
		for _, t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (float64(len(chunks))-float64(df[t])+0.5)/(float64(df[t])+0.5))
			scores[i] += idf * f * 2.2 / (f + 1.2*norm)
		}
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return order
}

// baselineSpans takes the best chunks for the question while their tokens
// stay within budget, and returns their byte spans.
func baselineSpans(text string, chunks []baselineChunk, question string, budget int, count func(string) int) [][2]int {
	var spans [][2]int
	used := 0
	for _, i := range baselineRank(chunks, question) {
		c := chunks[i]
		n := count(text[c.start:c.end])
		if used+n > budget {
			break
		}
		used += n
		spans = append(spans, [2]int{c.start, c.end})
	}
	return spans
}
