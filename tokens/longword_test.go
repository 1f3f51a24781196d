package tokens

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// smallWindows makes countLong cut pre-tokens of a few thousand bytes into
// windows of a few hundred, for the length of a test.
func smallWindows(t *testing.T) {
	pt, lo, hi, bits, k := longPreToken, longMin, longMax, longBits, longKeep
	longPreToken, longMin, longMax, longBits, longKeep = 300, 192, 384, 6, 64
	sb, ms := segBits, minSegmented
	segBits, minSegmented = 5, 128
	t.Cleanup(func() {
		longPreToken, longMin, longMax, longBits, longKeep = pt, lo, hi, bits, k
		segBits, minSegmented = sb, ms
	})
}

// longWords are pre-tokens of the kinds countLong counts: words of random
// letters from alphabets small and large, of one case and two, runs of one
// letter and of a short pattern, and punctuation runs, with the prefixes,
// contractions and line breaks the patterns take with them.
func longWords(r *rand.Rand, n int) []string {
	draw := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	return []string{
		draw("abcdefghijklmnopqrstuvwxyz", n),
		draw("ab", n),
		draw("aeiou", n),
		draw("etaoinshrdlu", n),
		" " + draw("abcdefghijklmnopqrstuvwxyz", n),
		"-" + draw("xyz", n) + "'s",
		draw("ABCDEFGHIJKLMNOPQRSTUVWXYZ", n),
		draw("ABC", n) + draw("abc", n),
		draw("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", n),
		strings.Repeat("a", n),
		strings.Repeat("x", n),
		strings.Repeat("ab", n/2),
		strings.Repeat("baton", n/5),
		strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		" " + strings.Repeat("=", n) + "\n\n",
		draw("[](){}<>=-*_#!?.,;:|/", n),
		draw("-=", n) + "/",
		"." + strings.Repeat("\n", n),
		" ;;" + draw("\r\n", n),
		strings.Repeat("\n", n),
		strings.Repeat("\r\n", n/2),
		"  \t" + strings.Repeat("\n", n),
		draw("\r\n", n),
		draw(" \t", n),
	}
}

// TestLongPreTokenExact: a long word or punctuation run counted in windows
// counts what the tokenizer counts on it whole, in both encodings, with
// windows so small that every word is cut hundreds of times.
func TestLongPreTokenExact(t *testing.T) {
	smallWindows(t)
	r := rand.New(rand.NewPCG(7, 25))
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{301, 1000, 5000, 20000} {
			for i, w := range longWords(r, n) {
				cuts := 0
				longHook = func(int) { cuts++ }
				got, ok := c.countASCII(w)
				longHook = nil
				want, err := c.codec.Count(w)
				if err != nil || !ok {
					t.Fatalf("%s word %d of %d bytes: counted %v, tokenizer %v", enc, i, n, ok, err)
				}
				if got != want {
					t.Errorf("%s word %d of %d bytes (%.20q...): %d tokens in windows, %d whole", enc, i, len(w), w, got, want)
				}
				if !c.onePreToken(w) {
					continue // o200k_base cuts a word where lower case meets upper
				}
				if n >= 1000 && cuts < n/longMax {
					t.Errorf("%s word %d of %d bytes: cut %d times", enc, i, n, cuts)
				}
				if k, done := c.countLong(w); !done || k != want {
					t.Errorf("%s word %d of %d bytes: countLong = %d, %v; want %d", enc, i, n, k, done, want)
				}
			}
		}
	}
}

// TestLongSubstringExact: a part of a long word or run counted before
// (a passage, a slice, a part of a map) is counted in windows the whole's
// count left in windowMemo, and still counts what the tokenizer counts on
// it, in both encodings, for parts that start and end anywhere.
func TestLongSubstringExact(t *testing.T) {
	smallWindows(t)
	r := rand.New(rand.NewPCG(11, 25))
	segmented := 0
	defer func() {
		if segmented < 100 {
			t.Errorf("only %d parts were counted from segments", segmented)
		}
	}()
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1000, 5000, 20000} {
			for i, w := range longWords(r, n) {
				c.countASCII(w)
				for range 6 {
					a := r.IntN(len(w) / 2)
					b := a + r.IntN(len(w)-a) + 1
					sub := w[a:b]
					want, err := c.codec.Count(sub)
					if err != nil {
						t.Fatal(err)
					}
					if got, ok := c.countASCII(sub); !ok || got != want {
						t.Errorf("%s word %d, bytes %d to %d: %d tokens (%v), the tokenizer %d", enc, i, a, b, got, ok, want)
					}
					if !c.onePreToken(sub) {
						continue
					}
					if got, ok := c.countLong(sub); ok && got != want {
						t.Errorf("%s word %d, bytes %d to %d: countLong = %d; want %d", enc, i, a, b, got, want)
					}
					if got, ok := c.countSegments(sub); ok {
						segmented++
						if got != want {
							t.Errorf("%s word %d, bytes %d to %d: countSegments = %d; want %d", enc, i, a, b, got, want)
						}
					}
				}
			}
		}
	}
}

// TestLongSubstringReuses: once a word of a megabyte is counted, counting a
// part of it of a hundred kilobytes or more hands the tokenizer only a few
// windows (its first, until its cuts meet the whole's, and its last), not
// the whole part again.
func TestLongSubstringReuses(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 11))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	w, c := string(b), Default()
	c.Count(w)
	for range 8 {
		from := r.IntN(len(w) / 2)
		to := from + 128<<10 + r.IntN(256<<10)
		sub := w[from:to]
		handed := 0
		codecHook = func(n int) { handed += n }
		got := c.Count(sub)
		codecHook = nil
		if limit := 8 * longMax; handed > limit {
			t.Errorf("bytes %d to %d: the tokenizer was handed %d bytes; want at most %d", from, to, handed, limit)
		}
		if want := len(ids(t, c, sub)); got != want {
			t.Errorf("bytes %d to %d: %d tokens, the tokenizer %d", from, to, got, want)
		}
	}
}

// TestLongPassagesReuse: once a word of a megabyte is counted, its
// passages of 2,000 bytes (shorter than a window) are counted from the
// segments its windows left: the tokenizer is handed their first and last
// bytes, well under half of them, and the counts are the tokenizer's.
func TestLongPassagesReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 25))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	w, c := string(b), Default()
	c.Count(w)
	const size, from, to = 2000, 300_000, 500_000
	handed := 0
	codecHook = func(n int) { handed += n }
	got := 0
	for at := from; at < to; at += size {
		got += c.Count(w[at : at+size])
	}
	codecHook = nil
	if handed > (to-from)/2 {
		t.Errorf("the tokenizer was handed %d bytes for passages of %d; want at most half", handed, to-from)
	}
	want := 0
	for at := from; at < to; at += size {
		want += len(ids(t, c, w[at:at+size]))
	}
	if got != want {
		t.Errorf("passages: %d tokens, the tokenizer %d", got, want)
	}
}

// TestLongWordWarm: helpers count parts of a long word ahead of the main
// count on further cores, and the count is still the tokenizer's, for
// words, punctuation runs and runs of line breaks.
func TestLongWordWarm(t *testing.T) {
	lp, procs := longParallel, runtime.GOMAXPROCS(4)
	longParallel = 64 << 10
	var helpers atomic.Int64
	warmHook = func() { helpers.Add(1) }
	t.Cleanup(func() {
		longParallel, warmHook = lp, nil
		runtime.GOMAXPROCS(procs)
	})
	r := rand.New(rand.NewPCG(9, 25))
	b := make([]byte, 600<<10)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	for _, w := range []string{
		string(b),
		" " + strings.Repeat("[", 300<<10) + strings.Repeat("]", 300<<10),
		strings.Repeat("\n", 500<<10),
	} {
		before := helpers.Load()
		got, ok := Default().countLong(w)
		if !ok {
			t.Errorf("%.20q...: not counted in windows", w)
			continue
		}
		if helpers.Load()-before < 3 {
			t.Errorf("%.20q...: %d helpers ended; want 3", w, helpers.Load()-before)
		}
		if want := len(ids(t, Default(), w)); got != want {
			t.Errorf("%.20q...: %d tokens, the tokenizer %d", w, got, want)
		}
	}
}

// TestLongWordBounded: a word of megabytes, a run of brackets, an HTML
// comment of one long word and a million blank lines are handed to the
// tokenizer in windows, never whole (the tokenizer holds
// about 40 bytes for each byte it merges: a 10 MB word took 760 MB), and
// counted as the tokenizer counts them whole.
func TestLongWordBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 7))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	for _, w := range []string{
		string(b),
		strings.Repeat("[", 1<<19) + strings.Repeat("]", 1<<19),
		"<!-- " + strings.Repeat("x", 1<<20) + " -->",
		strings.Repeat("\n", 1<<20),
	} {
		c := Default()
		largest := 0
		codecHook = func(n int) { largest = max(largest, n) }
		got := c.Count("Some words before it.\n" + w + "\n")
		codecHook = nil
		if largest > longMax+longMin {
			t.Errorf("the tokenizer was handed %d bytes at once; want at most %d", largest, longMax+longMin)
		}
		want, err := c.codec.Count("Some words before it.\n" + w + "\n")
		if err != nil || got != want {
			t.Errorf("counted %d, the tokenizer %d (%v)", got, want, err)
		}
	}
}

// TestLongWordCancel: a cancelled count of a long word stops within a
// window (the index checks its context only between pieces, and the word
// is one), and what it counted is not remembered.
func TestLongWordCancel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	ctx, cancel := context.WithCancel(context.Background())
	windows := 0
	longHook = func(int) {
		windows++
		cancel()
	}
	_, err := Default().IndexedContext(ctx, string(b))
	longHook = nil
	if err == nil {
		t.Fatal("IndexedContext after cancel: no error")
	}
	if windows > 1 {
		t.Errorf("%d windows counted after the cancel; want none", windows-1)
	}
	if got, want := Default().Count(string(b)), ids(t, Default(), string(b)); got != len(want) {
		t.Errorf("after a cancelled count: %d tokens, the tokenizer %d", got, len(want))
	}
}

// FuzzLongPreToken: any word or punctuation run, counted in small windows,
// counts what the tokenizer counts on it whole. The input picks the
// characters; it is repeated with a varying tail past the window size.
func FuzzLongPreToken(f *testing.F) {
	f.Add([]byte("abcabd"), uint16(900))
	f.Add([]byte("[[]]=-"), uint16(700))
	f.Add([]byte("aaaaaaab"), uint16(2000))
	f.Fuzz(func(t *testing.T, seed []byte, n uint16) {
		if len(seed) == 0 {
			return
		}
		smallWindows(t)
		const letters = "abcdefghijklmnopqrstuvwxyz"
		const punct = "[](){}<>=-*_#!?.,;:|/"
		alphabet := letters
		switch seed[0] % 4 {
		case 1:
			alphabet = punct
		case 2:
			alphabet = "\r\n"
		case 3:
			alphabet = " \t"
		}
		w := make([]byte, 301+int(n)%4000)
		for i := range w {
			w[i] = alphabet[int(seed[i%len(seed)]^byte(i/len(seed)))%len(alphabet)]
		}
		for _, enc := range []Encoding{O200kBase, Cl100kBase} {
			c, _ := New(enc)
			got, ok := c.countLong(string(w))
			want, err := c.codec.Count(string(w))
			if err != nil {
				t.Fatal(err)
			}
			if ok && got != want {
				t.Fatalf("%s: %q: %d tokens in windows, %d whole", enc, w, got, want)
			}
			// A part of the word, counted after it, meets the windows the
			// word left in windowMemo.
			sub := string(w[int(n)%(len(w)/2):])
			want, err = c.codec.Count(sub)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := c.countLong(sub); ok && got != want {
				t.Fatalf("%s: %q: part %q: %d tokens in windows, %d whole", enc, w, sub, got, want)
			}
			if got, ok := c.countSegments(sub); ok && got != want {
				t.Fatalf("%s: %q: part %q: %d tokens from segments, %d whole", enc, w, sub, got, want)
			}
		}
	})
}
