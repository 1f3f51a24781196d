package tokens

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Counting in pieces. Both encodings split text into pre-tokens with a
// regular expression before merging bytes, and no pre-token of either holds a
// line break followed by a character that is neither white space nor '/'
// (o200k_base lets "/" follow a break inside one pre-token; white space joins
// the break). No pattern looks behind, and the one look-ahead, `\s+(?!\S)`,
// never decides where a run of white space that ends in a line break stops:
// `\s*[\r\n]+` is tried first and takes it. So such a point is a clean
// break: the tokens of the text are the tokens of the part before it
// followed by the tokens of the part after it, wherever the text came from.
// Counting between clean breaks gives the same count as counting the whole,
// while the tokenizer's copy of its input (a []rune, four bytes a character)
// and its matches only ever hold one piece. TestCleanBreaksCompose checks the
// claim on real documents, and FuzzCleanBreaks on arbitrary input.

// chunkBytes is the size a piece grows to before it is cut at the next clean
// break. A variable so that tests can cut at every break.
var chunkBytes = 64 << 10

// cleanStart reports whether s begins with what makes the point before it,
// when a line break precedes it, a clean break. It is conservative:
// printable ASCII other than white space and '/', or a letter; or
// indentation (spaces and tabs) and then printable ASCII or a letter. No
// pre-token joins a line break to the indentation after it when the
// indentation holds no other line break: `\s*[\r\n]+` is tried first and
// ends at the break, and only white space follows a break inside a
// pre-token. Lines of a nested list or of indented code are so cut apart,
// and a document of them counted once, not again for every part of it.
func cleanStart(s string) bool {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) {
		return false
	}
	b := s[i]
	if b < utf8.RuneSelf {
		// o200k_base joins a '/' right after a break to the punctuation
		// before it; after indentation there is none to join.
		return b > ' ' && b < 0x7f && (b != '/' || i > 0)
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return !(r == utf8.RuneError && n <= 1) && unicode.IsLetter(r)
}

// nextBreak returns the first clean break at or after from (1 <= from), or
// -1 when there is none.
func nextBreak(s string, from int) int {
	for i := max(from, 1); i < len(s); {
		j := strings.IndexByte(s[i-1:], '\n')
		if j < 0 {
			return -1
		}
		at := i - 1 + j + 1 // just past the '\n'
		if at < len(s) && cleanStart(s[at:]) {
			return at
		}
		i = at + 1
	}
	return -1
}

// lastBreak returns the last clean break in s, or -1.
func lastBreak(s string) int {
	for end := len(s); end > 0; {
		j := strings.LastIndexByte(s[:end], '\n')
		if j < 0 {
			return -1
		}
		if j+1 < len(s) && cleanStart(s[j+1:]) {
			return j + 1
		}
		end = j
	}
	return -1
}

// countJoined counts the concatenation of parts, without building it:
// pieces are cut at clean breaks (see above), and only the text between the
// last break of one part and the first of the next is copied.
func (c *Counter) countJoined(parts ...string) int {
	n := 0
	var carry []string // text since the last break, from earlier parts
	carryLen := 0
	endsNL := false // whether the text so far ends with '\n'
	flush := func(extra string) {
		switch {
		case carryLen == 0:
			n += c.countPiece(extra)
			return
		case len(carry) == 1 && extra == "":
			n += c.countPiece(carry[0])
		default:
			n += c.countPiece(strings.Join(append(carry, extra), ""))
		}
		carry, carryLen = carry[:0], 0
	}
	for _, p := range parts {
		if p == "" {
			continue
		}
		start := 0
		if carryLen > 0 {
			// The first break in p closes the carried text.
			b := 0
			if !(endsNL && cleanStart(p)) {
				b = nextBreak(p, 1)
			}
			if b < 0 {
				carry, carryLen = append(carry, p), carryLen+len(p)
				endsNL = p[len(p)-1] == '\n'
				continue
			}
			flush(p[:b])
			start = b
		}
		for start < len(p) {
			b := nextBreak(p, start+chunkBytes)
			if b < 0 {
				break
			}
			n += c.countPiece(p[start:b])
			start = b
		}
		if start < len(p) {
			carry, carryLen = append(carry, p[start:]), carryLen+len(p)-start
		}
		endsNL = p[len(p)-1] == '\n'
	}
	if carryLen > 0 {
		flush("")
	}
	return n
}

// pieceHook, when set (by tests), sees the size of every piece counted.
var pieceHook func(n int)

// countPiece counts one piece with the tokenizer.
func (c *Counter) countPiece(s string) int {
	if s == "" {
		return 0
	}
	if pieceHook != nil {
		pieceHook(len(s))
	}
	if c.meter != nil {
		c.meter.Add(int64(len(s)))
	}
	if len(s) >= minSpaceRun && isSpaceRun(s) {
		return c.spaceRun(len(s))
	}
	if c.memo != nil && plainASCII(s) {
		if n, ok := c.countASCII(s); ok {
			return n
		}
	}
	n, err := c.codecCount(s)
	if err != nil {
		// With ErrorModeReplace the codec does not fail on input; an error
		// here would be a regexp engine limit. Fall back to a byte estimate
		// rather than dropping the text from the accounting.
		return (len(s) + 3) / 4
	}
	return n
}

// Counted is a text with its count, kept so that the count of the text
// inside a longer one (a prompt that wraps a document in tags) costs only
// the wrapping and the text's first and last lines, not the text again.
type Counted struct {
	c      *Counter
	text   string
	tokens int
	// head is the text's first clean break and tail its last, -1 when it
	// has none; headTokens and tailTokens count text[:head] and
	// text[tail:].
	head, tail             int
	headTokens, tailTokens int
	ix                     *index // nil unless counted by Indexed
}

// Counted counts text once and keeps what Wrapped needs.
func (c *Counter) Counted(text string) Counted {
	ct := Counted{c: c, text: text, head: nextBreak(text, 1), tail: lastBreak(text)}
	if ct.head < 0 {
		ct.tokens = c.countJoined(text)
		return ct
	}
	ct.headTokens = c.countJoined(text[:ct.head])
	ct.tailTokens = c.countJoined(text[ct.tail:])
	ct.tokens = ct.headTokens + c.countJoined(text[ct.head:ct.tail]) + ct.tailTokens
	return ct
}

// Tokens is the text's count.
func (ct Counted) Tokens() int { return ct.tokens }

// Text is the text counted.
func (ct Counted) Text() string { return ct.text }

// Wrapped returns the count of prefix + text + suffix, the same as Count of
// that string, reading only the ends of the text again.
func (ct Counted) Wrapped(prefix, suffix string) int {
	if ct.c == nil {
		return 0
	}
	if ct.head < 0 {
		return ct.c.countJoined(prefix, ct.text, suffix)
	}
	middle := ct.tokens - ct.headTokens - ct.tailTokens
	return ct.c.countJoined(prefix, ct.text[:ct.head]) + middle + ct.c.countJoined(ct.text[ct.tail:], suffix)
}

// A run of spaces alone is a piece wherever a part of the context is cut
// inside indentation (a passage of a deeply nested list), and merging one
// costs the tokenizer far more than text does. The same run always counts
// the same, so each length is counted once per encoding.
const (
	minSpaceRun   = 64
	maxSpaceCount = 1 << 14 // lengths remembered
)

var spaceCounts = &spaceMemo{n: map[spaceKey]int{}}

// spaceLoop is the length of the longest run of spaces that is one token in
// o200k_base and cl100k_base. Both merge a longer run into tokens of that
// length from its start, so a run of n > 2*spaceLoop spaces counts one more
// than the run spaceLoop shorter (TestSpaceRunPeriod checks it on every
// length to 4,096). The indentation of a list nested thousands deep, a run
// of a different length on every line, so costs the tokenizer no more than
// a run of 256.
const spaceLoop = 128

// spaceRun returns the count of n spaces (n >= 1).
func (c *Counter) spaceRun(n int) int {
	extra := 0
	if c.enc == O200kBase || c.enc == Cl100kBase {
		if n > 2*spaceLoop {
			extra = (n - 2*spaceLoop + spaceLoop - 1) / spaceLoop
			n -= extra * spaceLoop
		}
	}
	if k, ok := spaceCounts.get(c.enc, n); ok {
		return k + extra
	}
	k, err := c.codecCount(strings.Repeat(" ", n))
	if err != nil {
		return (n+3)/4 + extra
	}
	spaceCounts.put(c.enc, n, k)
	return k + extra
}

type spaceKey struct {
	enc Encoding
	len int
}

type spaceMemo struct {
	mu sync.Mutex
	n  map[spaceKey]int
}

func (m *spaceMemo) get(enc Encoding, n int) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.n[spaceKey{enc, n}]
	return k, ok
}

func (m *spaceMemo) put(enc Encoding, n, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.n) < maxSpaceCount {
		m.n[spaceKey{enc, n}] = tokens
	}
}

func isSpaceRun(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			return false
		}
	}
	return true
}
