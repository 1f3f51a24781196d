package plan

import (
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTermSeqIsTerms: termSeq yields what terms returns, in order, on text
// with capitals, stopwords, suffixes, other scripts, digits of other
// scripts, marks, symbols that case-map and bytes that are not UTF-8.
func TestTermSeqIsTerms(t *testing.T) {
	pieces := []string{"The", "Latencies", "running", "İstanbul", "ΣΊΣΥΦΟΣ", "Straße", "٣٤", "Ⅻ", "Ⓐbc",
		"e\u0301t\u00e9", "\xff", "\xe2\x82", "x", "of", "and", "2024", "ﬁle", "ǅemal", " ", "\n", "-", ".", "—", "a_b"}
	r := rand.New(rand.NewSource(7))
	for range 2000 {
		var b strings.Builder
		for range r.Intn(30) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		s := b.String()
		if got, want := slices.Collect(termSeq(s)), terms(s); !slices.Equal(got, want) {
			t.Fatalf("termSeq(%q) = %q; terms gives %q", s, got, want)
		}
	}
}

// TestPassageIndexKeepsNothingPerWord: building the passage index of a
// passage of 200,000 one-letter words, keeping the postings of one word,
// allocates under 2 bytes a word (a string header each, and the split's
// spans, over 50 before), and still counts every word in its length.
func TestPassageIndexKeepsNothingPerWord(t *testing.T) {
	const n = 200_000
	ps := []PassageText{{ID: "p1", Text: strings.Repeat("x\n", n)}, {ID: "p2", Text: "item 42 says hello\n"}}
	kept := termSet{"item": true}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := newPassageIndexKeeping(ps, kept)
	runtime.ReadMemStats(&after)
	if got := slices.Collect(termSeq(ps[0].Text)); len(got) != n {
		t.Fatalf("%d terms; want %d", len(got), n)
	}
	if got := ix.pick("What does item 42 say?"); !slices.Equal(got, []int{1}) {
		t.Errorf("pick = %v; want the passage that names item 42", got)
	}
	if perWord := float64(after.TotalAlloc-before.TotalAlloc) / n; perWord > 2 {
		t.Errorf("the index allocated %.1f bytes a word; want at most 2", perWord)
	}
}

// TestBodyIndexKeepsNothingPerWord: the section index reads a section of
// 200,000 words as the passage index does, under 2 bytes a word, and
// still counts every word in the section's length.
func TestBodyIndexKeepsNothingPerWord(t *testing.T) {
	const n = 200_000
	secs := []SectionText{
		{Title: "Big", Text: strings.Repeat("x\n", n), Line: 1, EndLine: n},
		{Title: "Items", Text: "item 42 says hello\n", Line: n + 1, EndLine: n + 1},
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	bi := newBodyIndex(secs, []int{-1, -1}, termSet{"item": true})
	runtime.ReadMemStats(&after)
	if want := len(terms(secs[1].Text)); bi.lens[0] != n || bi.lens[1] != float64(want) {
		t.Errorf("section lengths %v; want [%d %d]", bi.lens, n, want)
	}
	if perWord := float64(after.TotalAlloc-before.TotalAlloc) / n; perWord > 2 {
		t.Errorf("the index allocated %.1f bytes a word; want at most 2", perWord)
	}
}
