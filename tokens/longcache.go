package tokens

import (
	"context"
	"hash/maphash"
	"runtime"
	"sync"
)

// Windows chosen by content. A run counts its context, then its passages,
// its parts and their prompts: each a different part of a long word, so the
// count of the whole (longCounts) is no help, and each cost as much BPE as
// the first. A window's end is therefore chosen by the bytes before it,
// not by its distance from the start of the word (longCut), and what the
// count needs of a window is remembered by its text (windowMemo). A part of
// a word counted before then meets the same cuts as the whole, except in
// its first window or two. Its windows start where the whole's did, so
// they are the same text, and only those first windows and its last are
// encoded again. The join at every cut is still proved as before, so the
// count stays exact whatever the cache holds.

// gear holds a fixed random number for every byte value, for longCut's
// rolling hash. It is made by splitmix64 from a constant seed, so the cuts
// of a text are the same in every run.
var gear = func() (g [256]uint64) {
	x := uint64(0x62617430_6e5f6c77)
	for i := range g {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		g[i] = z ^ z>>31
	}
	return g
}()

// longCut returns the end of the window of p that starts at pos, and
// whether it is the last (then end is len(p)). A window ends after the
// first byte, from longMin bytes on, where the gear hash of the 64 bytes
// before it has its top longBits bits clear; at longMax bytes when none
// does. The hash forgets a byte 64 bytes after it, so whether a place cuts
// depends on those 64 bytes only. A window that would leave fewer than
// longMin bytes of the body (which ends at hi) is the last one. longMin is
// at least 64, so the hash never reads before the window.
func longCut(p string, pos, hi int) (int, bool) {
	from, top := pos+longMin, min(pos+longMax, hi-longMin)
	if from > top {
		return len(p), true
	}
	var h uint64
	for i := max(pos, from-64); i < top; i++ {
		h = h<<1 + gear[p[i]]
		if i+1 >= from && h>>(64-longBits) == 0 {
			return i + 1, false
		}
	}
	return top, false
}

// winSum is what countLong needs of a window's tokens: their number, the
// size of the first, and how many end at or before longKeep bytes from the
// window's end (at least one), where the last of those ends and its size.
type winSum struct {
	n, first, k, at, last int
}

func summarize(toks []string, size int) winSum {
	k, at := 1, len(toks[0])
	for k < len(toks) && at+len(toks[k]) <= size-longKeep {
		at += len(toks[k])
		k++
	}
	return winSum{n: len(toks), first: len(toks[0]), k: k, at: at, last: len(toks[k-1])}
}

// window returns the summary of the window w, from windowMemo or from the
// tokenizer. ok is false when w is not one pre-token or the tokenizer
// fails.
func (c *Counter) window(w string) (winSum, bool) {
	key := winKey{enc: c.enc, keep: longKeep, n: len(w), h1: maphash.String(longSeeds[0], w), h2: maphash.String(longSeeds[1], w)}
	if s, ok := windowMemo.get(key); ok {
		return s, true
	}
	if windowHook != nil {
		windowHook(len(w))
	}
	toks, ok := c.encodeOne(w)
	if !ok {
		return winSum{}, false
	}
	s := summarize(toks, len(w))
	windowMemo.put(key, s)
	c.rememberSegments(w, toks)
	return s, true
}

// windowHook, when set (by tests), sees the size of every window encoded.
var windowHook func(n int)

// A window is known again, as a long pre-token is, by its length and two
// 64-bit hashes; the text is not kept.
type winKey struct {
	enc     Encoding
	keep, n int
	h1, h2  uint64
}

// windowMemo holds at most two generations of maxWindows summaries of
// windows and segments (segments.go): when the newer is full it becomes
// the older and the oldest is dropped. An entry takes about 100 to 130
// bytes with the map's own, so the memo stays under about 20 MB. A word of
// 10 MB leaves about 42,000 entries.
var windowMemo = &winMemo{cur: map[winKey]winSum{}}

const maxWindows = 1 << 16

type winMemo struct {
	mu       sync.Mutex
	cur, old map[winKey]winSum
}

func (m *winMemo) get(k winKey) (winSum, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.cur[k]; ok {
		return s, true
	}
	s, ok := m.old[k]
	return s, ok
}

func (m *winMemo) put(k winKey, s winSum) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cur) >= maxWindows {
		m.old, m.cur = m.cur, make(map[winKey]winSum, maxWindows/16)
	}
	m.cur[k] = s
}

// A word of megabytes is one piece of the index, so one core would count
// it while the others wait. warm therefore starts a goroutine for each
// further core that counts a part of the word ahead, from its own start:
// the windows it encodes are remembered, and the main count, reaching
// that part, meets the same cuts and finds them. What the helpers count is
// discarded; they only fill windowMemo, so the count is exact whatever
// they manage. The returned function stops them and waits for them.
func (c *Counter) warm(p string, hi int) func() {
	parts := min(runtime.GOMAXPROCS(0), hi/longParallel)
	if parts < 2 {
		return func() {}
	}
	base := c.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(base)
	cc := *c
	cc.ctx = ctx
	var wg sync.WaitGroup
	for k := 1; k < parts; k++ {
		// Each part runs a few windows into the next, so that the next
		// helper's first windows, which the main count will not meet, are
		// not the only ones there.
		part := p[hi*k/parts : min(hi, hi*(k+1)/parts+4*longMax)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, h, ok := longBody(part); ok && h > longMin {
				cc.countWindows(part, h, false)
			}
			if warmHook != nil {
				warmHook()
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// longParallel is the least part of a word that warm hands a helper. A
// variable so that tests can make it small.
var longParallel = 1 << 20

// warmHook, when set (by tests), sees every helper of warm end.
var warmHook func()
