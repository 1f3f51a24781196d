package tokens

import (
	"sync"
)

// Splitting plain text into pre-tokens without the tokenizer's regular
// expression. The tokenizer matches its pattern (one per encoding) with a
// backtracking engine that allocates for every match, and that costs most of
// a count: a 10 MB document took seconds a core. On text of printable ASCII,
// tabs and line breaks the pattern's classes are plain byte ranges (letters
// A-Z and a-z, upper case A-Z, digits 0-9, white space ' ', \t, \r, \n), and
// each alternative reduces to a short scan; splitASCII follows the
// alternatives in their order. A pre-token is merged into tokens on its own,
// so its count depends on nothing around it: each distinct pre-token is
// counted once by the tokenizer and remembered (preMemo). Any other byte
// (a control character, anything not ASCII) sends the whole piece to the
// tokenizer as before. TestSplitASCIIMatchesPattern checks the split against
// the patterns themselves, and FuzzPretokenCount the counts.

// plainASCII reports whether every byte of s is printable ASCII, a tab or a
// line break: the bytes splitASCII knows the classes of.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if (b < ' ' || b > '~') && b != '\t' && b != '\n' && b != '\r' {
			return false
		}
	}
	return true
}

func isUpper(b byte) bool  { return b >= 'A' && b <= 'Z' }
func isLower(b byte) bool  { return b >= 'a' && b <= 'z' }
func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isLetter(b byte) bool { return isUpper(b) || isLower(b) }
func isSpace(b byte) bool  { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// isPunct is [^\s\p{L}\p{N}] on plainASCII bytes.
func isPunct(b byte) bool { return !isSpace(b) && !isLetter(b) && !isDigit(b) }

// prefixable is [^\r\n\p{L}\p{N}] on plainASCII bytes.
func prefixable(b byte) bool { return b != '\r' && b != '\n' && !isLetter(b) && !isDigit(b) }

// splitASCII calls yield with each pre-token of s (plainASCII) under enc's
// pattern, in order.
func splitASCII(enc Encoding, s string, yield func(string)) {
	next := nextO200k
	if enc == Cl100kBase {
		next = nextCl100k
	}
	for i := 0; i < len(s); {
		j := next(s, i)
		yield(s[i:j])
		i = j
	}
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i:],
// or 0.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// nextO200k returns the end of the pre-token of o200k_base starting at i:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func nextO200k(s string, i int) int {
	c := s[i]
	// The first two alternatives. The optional prefix can only be taken
	// by a byte that is not a letter, and without it a non-letter fails
	// both, so the start of the letters is fixed.
	k := -1
	if isLetter(c) {
		k = i
	} else if prefixable(c) && i+1 < len(s) && isLetter(s[i+1]) {
		k = i + 1
	}
	if k >= 0 {
		u := k
		for u < len(s) && isUpper(s[u]) {
			u++
		}
		l := u
		for l < len(s) && isLower(s[l]) {
			l++
		}
		// Upper case alone (the second alternative) or upper then lower
		// (either: the first matches the same text).
		return l + contraction(s, l)
	}
	if isDigit(c) {
		j := i + 1
		for j < len(s) && j < i+3 && isDigit(s[j]) {
			j++
		}
		return j
	}
	if p := i + b2i(c == ' '); p < len(s) && isPunct(s[p]) {
		j := p + 1
		for j < len(s) && isPunct(s[j]) {
			j++
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	return spaceEnd(s, i)
}

// nextCl100k returns the end of the pre-token of cl100k_base starting at i:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func nextCl100k(s string, i int) int {
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	c := s[i]
	k := -1
	if isLetter(c) {
		k = i
	} else if prefixable(c) && i+1 < len(s) && isLetter(s[i+1]) {
		k = i + 1
	}
	if k >= 0 {
		for k < len(s) && isLetter(s[k]) {
			k++
		}
		return k
	}
	if isDigit(c) {
		j := i + 1
		for j < len(s) && j < i+3 && isDigit(s[j]) {
			j++
		}
		return j
	}
	if p := i + b2i(c == ' '); p < len(s) && isPunct(s[p]) {
		j := p + 1
		for j < len(s) && isPunct(s[j]) {
			j++
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	return spaceEnd(s, i)
}

// spaceEnd returns the end of \s*[\r\n]+|\s+(?!\S)|\s+ at s[i] (white
// space): through the run's last line break if it has one; else the run but
// its last byte when something follows it and the run is longer than one.
func spaceEnd(s string, i int) int {
	j := i
	last := -1
	for j < len(s) && isSpace(s[j]) {
		if s[j] == '\r' || s[j] == '\n' {
			last = j
		}
		j++
	}
	switch {
	case last >= 0:
		return last + 1
	case j == len(s) || j-i == 1:
		return j
	default:
		return j - 1
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Pre-tokens up to maxMemoKey bytes are remembered, up to maxMemo of them a
// counter: a few MB at most, and the words, numbers and punctuation of a
// document recur.
const (
	maxMemoKey = 24
	maxMemo    = 1 << 17
)

type preMemo struct {
	mu sync.RWMutex
	n  map[string]int32
}

func (m *preMemo) get(s string) (int, bool) {
	m.mu.RLock()
	n, ok := m.n[s]
	m.mu.RUnlock()
	return int(n), ok
}

func (m *preMemo) put(s string, n int) {
	m.mu.Lock()
	if len(m.n) < maxMemo {
		// A copy: s is part of a document the memo must not keep alive.
		m.n[string([]byte(s))] = int32(n)
	}
	m.mu.Unlock()
}

// countASCII counts s (plainASCII) pre-token by pre-token. ok is false when
// the tokenizer failed on one.
func (c *Counter) countASCII(s string) (n int, ok bool) {
	ok = true
	splitASCII(c.enc, s, func(p string) {
		if !ok {
			return
		}
		if len(p) >= minSpaceRun && p[0] == ' ' && isSpaceRun(p) {
			n += c.spaceRun(len(p))
			return
		}
		if len(p) > minRemembered {
			if k, done := c.countRemembered(p); done {
				n += k
				return
			}
		}
		if len(p) <= maxMemoKey {
			if k, hit := c.memo.get(p); hit {
				n += k
				return
			}
		}
		k, err := c.codecCount(p)
		if err != nil {
			ok = false
			return
		}
		if len(p) <= maxMemoKey {
			c.memo.put(p, k)
		}
		n += k
	})
	return n, ok
}
