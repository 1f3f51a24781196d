package tokens

import "hash/maphash"

// Segments. A run cuts its context into passages of a few kilobytes, each
// a part of a long word shorter than a window, so each would cost its own
// BPE. But any run of tokens inside the encoding of a window is the
// encoding of its own text (every two neighbours in it are compatible). So
// when a window is encoded, the runs of its tokens between anchors (places
// chosen by the 64 bytes before them, about every 1 << segBits bytes) that
// are also token boundaries are remembered by their text, as a count and
// the sizes of their first and last tokens (windowMemo, under keep -1). A
// later part of the word is cut at its own anchors. Where the text between
// two anchors is remembered, its tokens are known; the part's first and
// last bytes are encoded, and every join is proved compatible, as between
// windows. So the count stays exact whatever the memo holds.

// segBits sets the spacing of anchors; a variable so that tests can change
// it.
var segBits = 7

// segKeep is the keep of a segment's key in windowMemo: no window has it.
const segKeep = -1

// anchors returns the places in s[from:to] where the gear hash of the 64
// bytes before has its top segBits bits clear.
func anchors(s string, from, to int) []int {
	var out []int
	var h uint64
	for i := max(0, from-64); i < to; i++ {
		h = h<<1 + gear[s[i]]
		if i+1 >= from && i+1 >= 64 && i+1 < to && h>>(64-segBits) == 0 {
			out = append(out, i+1)
		}
	}
	return out
}

func (c *Counter) segKey(s string) winKey {
	return winKey{enc: c.enc, keep: segKeep, n: len(s), h1: maphash.String(longSeeds[0], s), h2: maphash.String(longSeeds[1], s)}
}

// rememberSegments remembers the runs of toks, the encoding of w, between
// anchors of w that are token boundaries.
func (c *Counter) rememberSegments(w string, toks []string) {
	as := anchors(w, 0, len(w))
	if len(as) < 2 {
		return
	}
	prevAt, prevTok, prevFirst := -1, 0, 0
	at, k := 0, 0
	for _, a := range as {
		for k < len(toks) && at < a {
			at += len(toks[k])
			k++
		}
		if at != a || k >= len(toks) {
			continue // the anchor is inside a token
		}
		if prevAt >= 0 {
			seg := w[prevAt:a]
			windowMemo.put(c.segKey(seg), winSum{n: k - prevTok, first: prevFirst, last: len(toks[k-1])})
		}
		prevAt, prevTok, prevFirst = a, k, len(toks[k])
	}
}

// countSegments counts p (one pre-token) from remembered segments between
// its anchors, encoding only what lies before the first and after the
// last, as the comment above says. ok is false when no segment is known or
// a join is not compatible; then the caller counts p whole.
func (c *Counter) countSegments(p string) (int, bool) {
	as := anchors(p, 0, len(p))
	// The first chain of remembered segments between anchors: start at the
	// first anchor that opens one, and go on while one does.
	start, end, total := -1, -1, 0
	first, last := 0, 0 // the first token of the chain, the last so far
	for i := 0; i < len(as); i++ {
		if end >= 0 && as[i] != end {
			continue
		}
		found := false
		for j := i + 1; j < len(as) && j <= i+8; j++ {
			s, ok := windowMemo.get(c.segKey(p[as[i]:as[j]]))
			if !ok {
				continue
			}
			if start < 0 {
				start, first = as[i], s.first
			} else if !c.compatible(p[end-last:end], p[end:end+s.first]) {
				return 0, false
			}
			end, last, total = as[j], s.last, total+s.n
			found, i = true, j-1
			break
		}
		if !found && start >= 0 {
			break
		}
	}
	if start < 0 {
		return 0, false
	}
	head, ok := c.encodeOne(p[:start])
	if !ok || !c.compatible(head[len(head)-1], p[start:start+first]) {
		return 0, false
	}
	tail, ok := c.encodeOne(p[end:])
	if !ok || !c.compatible(p[end-last:end], tail[0]) {
		return 0, false
	}
	return len(head) + total + len(tail), true
}
