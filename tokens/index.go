package tokens

import (
	"context"
	"math"
	"runtime"
	"sort"
	"sync"
	"unsafe"
)

// An index of a counted text. A run counts its context once, and then the
// outline counts every section of it, map-reduce every line and every part;
// each of those read the document again (a dry run over a large document
// handed the tokenizer 4.6 times its size). Counting the context piece by
// piece between its clean breaks (see stream.go) costs the same one reading
// and leaves the running total at every break, so the count of any text
// between two breaks is a subtraction, and that of any other part of the
// context only needs its ends read: from its start to the first break in
// it, and from its last break to its end.

// Indexed counts text once, as Counted does, and keeps the running count at
// every clean break (and every few hundred bytes of a long line, see
// nextPoint), for Span and Count. The index holds two 4-byte numbers a
// point (about a line): a few percent of the text.
func (c *Counter) Indexed(text string) Counted {
	ct, _ := c.IndexedContext(context.Background(), text)
	return ct
}

// IndexedContext is Indexed that stops soon after ctx is done, returning
// ctx's error and no count: a large text takes seconds to count.
func (c *Counter) IndexedContext(ctx context.Context, text string) (Counted, error) {
	if len(text) >= math.MaxInt32 {
		return c.Counted(text), nil // offsets would not fit; count without an index
	}
	ct := Counted{c: c, text: text, head: -1, tail: -1}
	// Pieces between clean breaks count apart, so the text is cut into one
	// part a core, each counted by its own goroutine: the count is the
	// same, the wait for it shorter.
	cuts := []int{0}
	if parts := min(runtime.GOMAXPROCS(0), len(text)/parallelMin); parts > 1 {
		for k := 1; k < parts; k++ {
			if b := nextPoint(text, max(len(text)*k/parts, cuts[len(cuts)-1]+1)); b > 0 {
				cuts = append(cuts, b)
			}
		}
	}
	cuts = append(cuts, len(text))
	ixs := make([]index, len(cuts)-1)
	var wg sync.WaitGroup
	for k := range ixs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ixs[k] = c.indexPart(ctx, text, cuts[k], cuts[k+1])
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Counted{}, err
	}
	ix := &index{at: []int32{0}, sum: []int32{0}}
	total := 0
	for _, p := range ixs {
		for j := range p.at {
			ix.at = append(ix.at, p.at[j])
			ix.sum = append(ix.sum, int32(min(total+int(p.sum[j]), math.MaxInt32)))
		}
		if n := len(p.sum); n > 0 {
			total += int(p.sum[n-1])
		}
	}
	ct.tokens = total
	ct.ix = ix
	if n := len(ix.at); n > 2 { // breaks inside the text: the same head and tail Counted keeps
		ct.head, ct.tail = int(ix.at[1]), int(ix.at[n-2])
		ct.headTokens = int(ix.sum[1])
		ct.tailTokens = total - int(ix.sum[n-2])
	}
	return ct, nil
}

// inlineGap is how far the index goes without a point: where no clean
// break comes within it, a point inside the line is taken (see nextPoint).
const inlineGap = 256

// nextPoint returns the next point of the index at or after from (1 <=
// from): the next clean break when one comes within inlineGap bytes, else
// the first clean break or point inside a line after that, or -1. A point
// inside a line is a space after an ASCII letter: no pre-token of either
// encoding holds a letter and a white space after it (letters end a
// pre-token, white space starts one), and no pattern looks behind, so the
// text's tokens are those of the part before the space followed by those
// of the part from it, as at a clean break. Wrapped3 takes such a point as
// it takes a break: only with the letter inside the text counted and a
// printable character after the space. A line of megabytes (a paragraph
// with no line break) is so counted in pieces too, and a part of it from
// the index.
func nextPoint(s string, from int) int {
	from = max(from, 1)
	end := min(len(s), from+inlineGap)
	if b := nextBreak(s[:end], from); b >= 0 {
		return b
	}
	for i := max(end, from); i < len(s); i++ {
		if s[i] == ' ' && isASCIILetter(s[i-1]) {
			return i
		}
		if s[i-1] == '\n' && cleanStart(s[i:]) {
			return i
		}
	}
	return -1
}

func isASCIILetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }

// parallelMin is the least text a goroutine of Indexed counts. A variable
// so that tests can cut small texts.
var parallelMin = 1 << 20

// indexPart counts text[from:to] piece by piece between its clean breaks
// (from and to are breaks or ends): at holds the end of every piece and
// sum the running count from from.
func (c *Counter) indexPart(ctx context.Context, text string, from, to int) index {
	c = c.withContext(ctx)
	var ix index
	total := 0
	for from < to {
		if len(ix.at)%64 == 63 && ctx.Err() != nil {
			return ix
		}
		end := nextPoint(text, from+1)
		if end < 0 || end > to {
			end = to
		}
		total += c.countPiece(text[from:end])
		ix.at, ix.sum = append(ix.at, int32(end)), append(ix.sum, int32(min(total, math.MaxInt32)))
		from = end
	}
	return ix
}

// index is the running count of a text at its clean breaks: sum[k] counts
// text[:at[k]]. at begins with 0 and ends with the text's length.
type index struct {
	at, sum []int32
}

// point returns k with at[k] == off, or -1.
func (ix *index) point(off int) int {
	k := sort.Search(len(ix.at), func(k int) bool { return int(ix.at[k]) >= off })
	if k < len(ix.at) && int(ix.at[k]) == off {
		return k
	}
	return -1
}

// Span returns the count of Text()[from:to] from the index, and false when
// the text was not counted by Indexed or either end is neither a clean break
// nor an end of the text (then the caller counts it).
func (ct Counted) Span(from, to int) (int, bool) {
	if ct.ix == nil || from < 0 || to > len(ct.text) || from > to {
		return 0, false
	}
	i, j := ct.ix.point(from), ct.ix.point(to)
	if i < 0 || j < 0 {
		return 0, false
	}
	return int(ct.ix.sum[j] - ct.ix.sum[i]), true
}

// offset returns where s lies in the counted text, when s is a part of the
// same memory (a substring, not a copy), else false.
func (ct Counted) offset(s string) (int, bool) {
	if len(s) == 0 || len(ct.text) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(ct.text)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p < base || p-base+uintptr(len(s)) > uintptr(len(ct.text)) {
		return 0, false
	}
	return int(p - base), true
}

// Holds reports whether s is a part of the counted text's own memory (a
// substring of it, not a copy), which Count and Wrapped3 answer from the
// index when the text was counted by Indexed.
func (ct Counted) Holds(s string) bool {
	_, ok := ct.offset(s)
	return ok
}

// Count returns the count of s, the same as Counter.Count. When s is a part
// of the indexed text itself (a section, a line, a map part: the same
// memory), only its ends are read: what lies before its first clean break
// and after its last; the rest comes from the index. Anything else is
// counted.
func (ct Counted) Count(s string) int { return ct.Wrapped3("", s, "") }

// Wrapped3 returns the count of prefix + s + suffix, the same as
// Counter.CountJoined of the three, reading only prefix, suffix and the ends
// of s when s is a part of the indexed text (see Count).
func (ct Counted) Wrapped3(prefix, s, suffix string) int {
	if ct.c == nil {
		return 0
	}
	a, ok := ct.offset(s)
	if !ok || ct.ix == nil {
		return ct.c.countJoined(prefix, s, suffix)
	}
	b := a + len(s)
	at := ct.ix.at
	// lo: the first break at or after a; hi: the last at or before b. A
	// break is clean in prefix+s+suffix only with s's '\n' before it and a
	// whole clean character after it: not at s's start after a prefix, nor
	// at its end before a suffix, nor before a letter that s's end cuts.
	lo := sort.Search(len(at), func(k int) bool { return int(at[k]) >= a })
	if lo < len(at) && int(at[lo]) == a && prefix != "" {
		lo++
	}
	hi := sort.Search(len(at), func(k int) bool { return int(at[k]) > b }) - 1
	if hi >= 0 && int(at[hi]) == b && suffix != "" {
		hi--
	}
	for hi > lo && int(at[hi]) < b && !cleanStart(ct.text[at[hi]:b]) {
		hi--
	}
	if lo >= hi {
		return ct.c.countJoined(prefix, s, suffix)
	}
	p, q := int(at[lo]), int(at[hi])
	head := ct.c.countJoined(prefix, ct.text[a:p])
	tail := ct.c.countJoined(ct.text[q:b], suffix)
	return head + int(ct.ix.sum[hi]-ct.ix.sum[lo]) + tail
}

// CleanBreak reports whether at is a clean break of s: a line break before
// it and a character after it that no pre-token joins to the break, so
// that the count of s is the count of s[:at] plus that of s[at:]. Split
// texts there and their counts add up exactly.
func (ct Counted) CleanBreak(s string, at int) bool {
	return at > 0 && at < len(s) && s[at-1] == '\n' && cleanStart(s[at:])
}

// Sub returns s counted as Counted would count it, from the index when s is
// a part of the indexed text (a section the assembler cut out of the
// context without copying): only s's ends are read. Anything else is
// counted.
func (ct Counted) Sub(s string) Counted {
	if ct.ix == nil || !ct.Holds(s) {
		if ct.c == nil {
			return Counted{}
		}
		return ct.c.Counted(s)
	}
	k := Counted{c: ct.c, text: s, head: nextBreak(s, 1), tail: lastBreak(s)}
	k.tokens = ct.Count(s)
	if k.head >= 0 {
		k.headTokens = ct.Count(s[:k.head])
		k.tailTokens = ct.Count(s[k.tail:])
	}
	return k
}
