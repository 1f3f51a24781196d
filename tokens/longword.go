package tokens

import (
	"context"
	"hash/maphash"
	"sync"
)

// Long pre-tokens. A word with no space, or a run of punctuation ("[[[[",
// "====", a comment's "xxxx"), is one pre-token however long it is, and
// the tokenizer merges a pre-token whole: its merge heap holds about 40
// bytes for every byte of it, and one of 10 MB took 760 MB and seconds.
// Inside a pre-token merges may join any two neighbours, so it cannot simply
// be cut. countLong counts one in windows and proves, window by window, that
// the tokens are those of the whole.
//
// The proof rests on a property of byte-pair encoding with ranked merges
// (the encodings' kind), argued in the README of GitHub's "bpe" crate
// (github.com/github/rust-gems, crates/bpe, Corollaries II, III and IIIa):
// a sequence of tokens is the encoding of its text exactly when every two
// neighbours are compatible, that is when the encoding of the two tokens'
// text together is those two tokens. That crate merges a token only from
// the pair it was built of, the tokenizer here from any pair that spells
// it; the argument (no merge crosses a boundary that no merge on either
// side would cross) does not rest on which pair spells a token, and the
// tests check the claim on this tokenizer. So the
// encoding of a window, cut after one of its tokens, is the encoding of that
// part (a prefix of a valid sequence is valid), and two such parts joined
// are the encoding of their joined text when the last token of the first
// and the first of the second are compatible, which the tokenizer tells on
// their few bytes. Where they are not, the cut moves back a token and the
// next window is encoded again. TestLongPreTokenExact compares the counts
// with the tokenizer's on the whole pre-token, on generated words and runs
// with windows of a few hundred bytes, so that every word is cut many
// times. Where the cuts fall and what is remembered of a window are in
// longcache.go.

// Pre-tokens longer than longPreToken are counted in windows. A window
// ends at a cut chosen by its content (longCut), between longMin and
// longMax bytes from its start; the tokens that end in its last longKeep
// bytes are encoded again with the next window. Variables so that tests
// can make them small.
var (
	longPreToken = 8 << 10
	longMin      = 1 << 10
	longMax      = 8 << 10
	longBits     = 11 // a cut about every 2 KB after longMin
	longKeep     = 256
)

// longBody returns the part [lo, hi) of the pre-token p (plainASCII, as
// splitASCII cut it) of which every part is itself one pre-token: the
// letters of a word (after its one-byte prefix, before a contraction), the
// punctuation of a run and the line breaks after it (after its space), or white
// space that is blanks then line breaks (a thousand blank lines). ok is
// false for other pre-tokens (numbers, white space that mixes the two).
func longBody(p string) (lo, hi int, ok bool) {
	if len(p) > 1 && !isLetter(p[0]) && isLetter(p[1]) || p[0] == ' ' && len(p) > 1 && isPunct(p[1]) {
		lo = 1
	}
	switch {
	case isLetter(p[lo]):
		hi = lo
		for hi < len(p) && isLetter(p[hi]) {
			hi++
		}
	case isPunct(p[lo]):
		hi = lo
		for hi < len(p) && isPunct(p[hi]) {
			hi++
		}
		// The line breaks the run takes with it ("." and a thousand blank
		// lines): any part of them, alone or after punctuation, is one
		// pre-token too. A '/' among them (o200k_base) would not be one
		// with the breaks before it alone, so then the body is the
		// punctuation only.
		brk := hi
		for brk < len(p) && (p[brk] == '\r' || p[brk] == '\n') {
			brk++
		}
		if brk == len(p) {
			hi = brk
		}
	case isSpace(p[lo]):
		// Blanks then line breaks, or blanks alone: every part is one
		// pre-token, as `\s*[\r\n]+` or `\s+(?!\S)` at its end.
		for hi < len(p) && (p[hi] == ' ' || p[hi] == '\t') {
			hi++
		}
		for hi < len(p) && (p[hi] == '\r' || p[hi] == '\n') {
			hi++
		}
		if hi < len(p) {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	return lo, hi, true
}

// onePreToken reports whether s is one pre-token of the counter's encoding
// (s plainASCII).
func (c *Counter) onePreToken(s string) bool {
	if c.enc == Cl100kBase {
		return nextCl100k(s, 0) == len(s)
	}
	return nextO200k(s, 0) == len(s)
}

// Pre-tokens over minRemembered bytes are remembered in longCounts: the
// passages and parts of a long word or run are counted one by one, and
// those of a run of one character are all the same text.
const minRemembered = 256

// Pre-tokens of minSegmented bytes or more are counted from remembered
// segments where they can be (countSegments). A variable so that tests can
// make it small.
var minSegmented = 1 << 10

// countRemembered counts the pre-token p (plainASCII, over minRemembered
// bytes) from longCounts, else with countLong when it is long, else with
// the tokenizer. ok is false when the tokenizer fails.
func (c *Counter) countRemembered(p string) (int, bool) {
	key := longKey{enc: c.enc, n: len(p), h1: maphash.String(longSeeds[0], p), h2: maphash.String(longSeeds[1], p)}
	if n, ok := longCounts.get(key); ok {
		return n, true
	}
	n, ok := 0, false
	if len(p) > longPreToken {
		n, ok = c.countLong(p)
		if c.cancelled() {
			return 0, true // the caller discards the count
		}
	}
	if !ok && len(p) >= minSegmented {
		n, ok = c.countSegments(p)
	}
	if !ok {
		k, err := c.codecCount(p)
		if err != nil {
			return 0, false
		}
		n = k
	}
	longCounts.put(key, n)
	return n, true
}

// countLong counts the pre-token p (plainASCII, longer than longPreToken)
// window by window, as the comment above says. ok is false when p is not
// of a kind it knows or a proof fails, and the caller counts p whole.
func (c *Counter) countLong(p string) (n int, ok bool) {
	_, hi, ok := longBody(p)
	if !ok {
		return 0, false
	}
	defer c.warm(p, hi)()
	return c.countWindows(p, hi, true)
}

// countWindows is countLong's loop over the windows of p, whose body ends
// at hi. Only the main count (main) shows its cuts to longHook.
func (c *Counter) countWindows(p string, hi int, main bool) (n int, ok bool) {
	pos, total := 0, 0
	var prev [2]int // the window before, whose first tokens end at pos
	last := ""      // the last of those tokens
	for {
		end, final := longCut(p, pos, hi)
		w, ok := c.window(p[pos:end])
		if !ok {
			return 0, false
		}
		if last != "" && !c.compatible(last, p[pos:pos+w.first]) {
			if pos, total, w, ok = c.backOff(p, prev, pos, end, total); !ok {
				return 0, false
			}
		}
		if final {
			return total + w.n, true
		}
		if c.cancelled() {
			return 0, false
		}
		prev = [2]int{pos, end}
		last = p[pos+w.at-w.last : pos+w.at]
		total, pos = total+w.k, pos+w.at
		if main && longHook != nil {
			longHook(pos)
		}
	}
}

// backOff is countLong's rare path, where the last token kept from the
// window p[prev[0]:prev[1]], which ends at pos, and the first of the
// window p[pos:end] are not compatible: the cut moves back a token at a
// time, and the next window is encoded again, until they are. The window
// before keeps at least its first token, whose own join was proved. It
// returns the new cut, the count before it and the window from it.
func (c *Counter) backOff(p string, prev [2]int, pos, end, total int) (int, int, winSum, bool) {
	before, ok := c.encodeOne(p[prev[0]:prev[1]])
	if !ok {
		return 0, 0, winSum{}, false
	}
	k, at := 0, prev[0]
	for at < pos {
		at += len(before[k])
		k++
	}
	kept := before[:k]
	toks, ok := c.encodeOne(p[pos:end])
	for ok && !c.compatible(kept[len(kept)-1], toks[0]) {
		pos -= len(kept[len(kept)-1])
		total--
		kept = kept[:len(kept)-1]
		if len(kept) == 0 {
			return 0, 0, winSum{}, false
		}
		toks, ok = c.encodeOne(p[pos:end])
	}
	if !ok {
		return 0, 0, winSum{}, false
	}
	return pos, total, summarize(toks, end-pos), true
}

// longHook, when set (by tests), sees every cut countLong makes.
var longHook func(at int)

// encodeOne returns the tokens of s, which must be one pre-token.
func (c *Counter) encodeOne(s string) ([]string, bool) {
	if !c.onePreToken(s) {
		return nil, false
	}
	toks, err := c.codecEncode(s)
	if err != nil || len(toks) == 0 {
		return nil, false
	}
	return toks, true
}

// compatible reports whether the tokens a and b, neighbours in a pre-token,
// are the encoding of a+b. Pairs recur (a long run of one character is the
// same pair at every cut), so answers are remembered.
func (c *Counter) compatible(a, b string) bool {
	key := a + "\x00" + b
	if v, ok := compatMemo.get(c.enc, key); ok {
		return v
	}
	ab := a + b
	ok := false
	if c.onePreToken(ab) {
		toks, err := c.codecEncode(ab)
		ok = err == nil && len(toks) == 2 && toks[0] == a
	}
	compatMemo.put(c.enc, key, ok)
	return ok
}

// compatMemo remembers up to maxCompat answers of compatible.
var compatMemo = &pairMemo{m: map[pairKey]bool{}}

const maxCompat = 1 << 16

type pairKey struct {
	enc  Encoding
	pair string
}

type pairMemo struct {
	mu sync.Mutex
	m  map[pairKey]bool
}

func (m *pairMemo) get(enc Encoding, pair string) (bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[pairKey{enc, pair}]
	return v, ok
}

func (m *pairMemo) put(enc Encoding, pair string, v bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.m) < maxCompat {
		m.m[pairKey{enc, pair}] = v
	}
}

// codecHook, when set (by tests), sees the size of every text handed to
// the tokenizer, which holds tens of bytes for each byte of it.
var codecHook func(n int)

func (c *Counter) codecCount(s string) (int, error) {
	if codecHook != nil {
		codecHook(len(s))
	}
	return c.codec.Count(s)
}

func (c *Counter) codecEncode(s string) ([]string, error) {
	if codecHook != nil {
		codecHook(len(s))
	}
	_, toks, err := c.codec.Encode(s)
	return toks, err
}

// A run counts its context several times (its index, the one-call
// baseline, the estimate), and a long pre-token costs a thousand times
// what hashing it does, so the last few counted are remembered
// (countRemembered). A copy of
// the text is not kept (it would keep a document alive): a pre-token is
// known again by its length and two independent 64-bit hashes, which two
// different texts share with a chance of about 2^-128.
var (
	longSeeds  = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	longCounts = &longMemo{}
)

type longKey struct {
	enc    Encoding
	n      int
	h1, h2 uint64
}

// longMemo is a small ring of the last pre-tokens counted.
type longMemo struct {
	mu   sync.Mutex
	keys [16]longKey
	vals [16]int
	next int
}

func (m *longMemo) get(k longKey) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, have := range m.keys {
		if have == k {
			return m.vals[i], true
		}
	}
	return 0, false
}

func (m *longMemo) put(k longKey, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[m.next], m.vals[m.next] = k, n
	m.next = (m.next + 1) % len(m.keys)
}

// withContext returns c with ctx to end long counts early, when ctx can
// be done.
func (c *Counter) withContext(ctx context.Context) *Counter {
	if ctx.Done() == nil {
		return c
	}
	cc := *c
	cc.ctx = ctx
	return &cc
}

func (c *Counter) cancelled() bool { return c.ctx != nil && c.ctx.Err() != nil }
