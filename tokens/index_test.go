package tokens

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// someText is about max bytes of the repository's real markdown.
func someText(t testing.TB, max int) []string {
	var docs []string
	size := 0
	for i, d := range realText(t) {
		if i%3 == 0 && size < max {
			docs = append(docs, d)
			size += len(d)
		}
	}
	return docs
}

func TestIndexedMatchesDirectCounts(t *testing.T) {
	c := Default()
	rng := rand.New(rand.NewPCG(9, 1))
	for i, d := range someText(t, 60<<10) {
		ct := c.Indexed(d)
		if got, want := ct.Tokens(), whole(c, d); got != want {
			t.Fatalf("document %d: indexed %d, whole %d", i, got, want)
		}
		var breaks []int
		for b := nextBreak(d, 1); b >= 0; b = nextBreak(d, b+1) {
			breaks = append(breaks, b)
		}
		if len(breaks) < 10 {
			t.Fatalf("document %d has %d clean breaks; the test would prove nothing", i, len(breaks))
		}
		ends := append([]int{0, len(d)}, breaks...)
		for range 15 {
			from, to := ends[rng.IntN(len(ends))], ends[rng.IntN(len(ends))]
			from, to = min(from, to), max(from, to)
			n, ok := ct.Span(from, to)
			if !ok {
				t.Fatalf("document %d: Span(%d, %d) between clean breaks was refused", i, from, to)
			}
			if want := whole(c, d[from:to]); n != want {
				t.Errorf("document %d: Span(%d, %d) = %d, whole %d", i, from, to, n, want)
			}
		}
		// Any substring, with and without wrapping, cut at lines or at
		// any byte (through a rune, after a break, before one).
		lines := strings.SplitAfter(d, "\n")
		starts := []int{0}
		for _, l := range lines {
			starts = append(starts, starts[len(starts)-1]+len(l))
		}
		for k := range 30 {
			var from, to int
			if k%2 == 0 {
				from, to = starts[rng.IntN(len(starts))], starts[rng.IntN(len(starts))]
			} else {
				from, to = rng.IntN(len(d)+1), rng.IntN(len(d)+1)
			}
			from, to = min(from, to), max(from, to)
			s := d[from:to]
			if got, want := ct.Count(s), whole(c, s); got != want {
				t.Errorf("document %d: Count of [%d:%d] = %d, whole %d", i, from, to, got, want)
			}
			pre, suf := "<context>\n", "\n</context>\n\n"
			if k%3 == 0 {
				pre, suf = "x", "y"
			}
			if got, want := ct.Wrapped3(pre, s, suf), whole(c, pre+s+suf); got != want {
				t.Errorf("document %d: Wrapped3 of [%d:%d] = %d, whole %d", i, from, to, got, want)
			}
			sub := ct.Sub(s)
			if got, want := sub.Tokens(), whole(c, s); got != want {
				t.Errorf("document %d: Sub of [%d:%d] counts %d, whole %d", i, from, to, got, want)
			}
			if got, want := sub.Wrapped(pre, suf), whole(c, pre+s+suf); got != want {
				t.Errorf("document %d: Sub of [%d:%d] wrapped counts %d, whole %d", i, from, to, got, want)
			}
		}
		if p, ok := ct.Span(1, len(d)); ok && d[0] != '\n' {
			t.Errorf("document %d: Span from a point that is no break answered %d", i, p)
		}
	}
}

// A section of the indexed text is counted from the index: the tokenizer
// reads only its ends, and a copy of it is counted in full.
func TestIndexedCountReadsOnlyEnds(t *testing.T) {
	var meter atomic.Int64
	c := Default().Metered(&meter)
	d := strings.Repeat("# Title\nSome prose here, in a line.\nAnother line of it.\n\n", 2000)
	ct := c.Indexed(d)
	if got := meter.Load(); got != int64(len(d)) {
		t.Fatalf("indexing read %d bytes of %d", got, len(d))
	}
	meter.Store(0)
	part := d[len(d)/4 : 3*len(d)/4]
	if got, want := ct.Count(part), whole(Default(), part); got != want {
		t.Fatalf("Count = %d, whole %d", got, want)
	}
	if got := meter.Load(); got > 200 {
		t.Errorf("counting half the text from the index read %d bytes, want only its ends", got)
	}
	meter.Store(0)
	cp := strings.Clone(part)
	ct.Count(cp)
	if got := meter.Load(); got != int64(len(cp)) {
		t.Errorf("a copy was read %d bytes, want %d (counted in full)", got, len(cp))
	}
}

// TestIndexedInParts indexes texts cut into several parts counted at once
// and checks the total and every span against direct counts.
func TestIndexedInParts(t *testing.T) {
	old, oldProcs := parallelMin, runtime.GOMAXPROCS(4)
	parallelMin = 4 << 10
	defer func() { parallelMin = old; runtime.GOMAXPROCS(oldProcs) }()
	c := Default()
	rng := rand.New(rand.NewPCG(5, 2))
	for i, d := range someText(t, 120<<10) {
		if len(d) < 3*parallelMin {
			continue
		}
		ct := c.Indexed(d)
		if got, want := ct.Tokens(), whole(c, d); got != want {
			t.Fatalf("document %d: indexed in parts %d, whole %d", i, got, want)
		}
		points := ct.ix.at
		for range 20 {
			from, to := int(points[rng.IntN(len(points))]), int(points[rng.IntN(len(points))])
			from, to = min(from, to), max(from, to)
			if got, ok := ct.Span(from, to); !ok || got != whole(c, d[from:to]) {
				t.Fatalf("document %d: Span(%d, %d) = %d, %v; whole %d", i, from, to, got, ok, whole(c, d[from:to]))
			}
		}
	}
}

// TestIndexLongLines indexes text whose lines run far past inlineGap (real
// documents with their line breaks taken out, and odd mixes of letters,
// spaces, marks and punctuation), so that the index has points inside
// lines, and checks the total and random parts, with and without
// wrapping, against direct counts in both encodings.
func TestIndexLongLines(t *testing.T) {
	var texts []string
	for _, d := range someText(t, 80<<10) {
		texts = append(texts, strings.ReplaceAll(d, "\n", " "), strings.ReplaceAll(d, "\n", "  "))
	}
	rng := rand.New(rand.NewPCG(11, 4))
	bits := []string{"word", " ", "  ", "A", "é", "\u0301", "'s", "'S", "12", ".", "!?", "\t", "\u00a0", "日本", "\n", "x\n", "/", "<b>", "'"}
	for range 6 {
		var b strings.Builder
		for b.Len() < 3*inlineGap {
			b.WriteString(bits[rng.IntN(len(bits))])
		}
		texts = append(texts, b.String())
	}
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range texts {
			ct := c.Indexed(d)
			if got, want := ct.Tokens(), whole(c, d); got != want {
				t.Fatalf("%s: text %d: indexed %d, whole %d", enc, i, got, want)
			}
			if len(d) > 2*inlineGap && len(ct.ix.at) < 3 {
				t.Fatalf("%s: text %d (%d bytes) has %d index points; the test would prove nothing", enc, i, len(d), len(ct.ix.at))
			}
			for range 10 {
				from, to := rng.IntN(len(d)), rng.IntN(len(d))
				from, to = min(from, to), max(from, to)
				s := d[from:to]
				if got, want := ct.Count(s), whole(c, s); got != want {
					t.Fatalf("%s: text %d: Count of [%d:%d] = %d, whole %d", enc, i, from, to, got, want)
				}
				pre, suf := bits[rng.IntN(len(bits))], bits[rng.IntN(len(bits))]
				if got, want := ct.Wrapped3(pre, s, suf), whole(c, pre+s+suf); got != want {
					t.Fatalf("%s: text %d: Wrapped3(%q, [%d:%d], %q) = %d, whole %d", enc, i, pre, from, to, suf, got, want)
				}
			}
		}
	}
}

// TestIndexedContextStops cancels an index under way: the count stops
// within a few dozen pieces of the cancel, not at the end of the text, and
// says it was cancelled.
func TestIndexedContextStops(t *testing.T) {
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, "# H%d\n", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pieces, after atomic.Int64
	pieceHook = func(int) {
		if pieces.Add(1) == 100 {
			cancel()
		} else if ctx.Err() != nil {
			after.Add(1)
		}
	}
	defer func() { pieceHook = nil }()
	_, err := Default().IndexedContext(ctx, b.String())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("IndexedContext: %v, want the cancellation", err)
	}
	if n := after.Load(); n > 64*int64(runtime.GOMAXPROCS(0)) {
		t.Errorf("%d pieces counted after the cancel; want it to stop within 64 a goroutine", n)
	}
}
