package tokens

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ids returns the tokens of s as the tokenizer alone gives them.
func ids(t testing.TB, c *Counter, s string) []uint {
	id, _, err := c.codec.Encode(s)
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return id
}

// checkSplit fails unless the tokens of s, pre-token by pre-token as
// splitASCII cuts it, are the tokens of s whole, and countASCII (with its
// memo) gives their number.
func checkSplit(t testing.TB, c *Counter, s string) {
	t.Helper()
	want := ids(t, c, s)
	var got []uint
	var pieces []string
	splitASCII(c.enc, s, func(p string) {
		pieces = append(pieces, p)
		got = append(got, ids(t, c, p)...)
	})
	if strings.Join(pieces, "") != s {
		t.Fatalf("%s: pieces of %q join to %q", c.enc, s, strings.Join(pieces, ""))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %q split as %q: tokens %v, whole %v", c.enc, s, pieces, got, want)
	}
	if n, ok := c.countASCII(s); !ok || n != len(want) {
		t.Fatalf("%s: countASCII(%q) = %d, %v; want %d", c.enc, s, n, ok, len(want))
	}
}

// randomASCII draws n bytes from the characters that decide the patterns'
// alternatives: letters of both cases, digits, apostrophes and the letters
// of contractions, punctuation, '/', and every kind of white space.
func randomASCII(r *rand.Rand, n int) string {
	const alphabet = "aAbZzsStTrReEvVlLmMdD0123456789'''...,;!?#*_-/()[]{}<>|    \t\t\n\n\r"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func TestSplitASCIIMatchesPattern(t *testing.T) {
	o200k, _ := New(O200kBase)
	cl100k, _ := New(Cl100kBase)
	cases := []string{
		"", "a", "A", "Hello", "HELLO", "HELLOworld", "helloWORLD", " Hello", "\tHello", ".Hello", "..Hello",
		"it's", "IT'S", "we're", "we'Re", "they'll", "you've", "I'd", "I'm", "'s", "'sx", "'r", "a'", "a'l",
		"12345678", " 1", "a1b2", "# H123456\n", "- item 42\n", "| 1 | x | y |\n", "[ref1]: http://example.com/1\n",
		"  x", "   x", " \n x", "\n\n  \n x", "a  ", "a \t", "a\r\n\r\nb", "}\n\n", "}\n/x", "x /\n", " .\n/",
		"*a _b [c *a _b [c ", strings.Repeat(" ", 3001) + "- item\n", "\n" + strings.Repeat(" ", 300) + "x", "```go\ncode\n", "  - item\n    - item\n", "a\tb", "\t\t", " \t x",
	}
	for _, c := range []*Counter{o200k, cl100k} {
		for _, s := range cases {
			checkSplit(t, c, s)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			checkSplit(t, c, randomASCII(r, 1+r.IntN(40)))
		}
		for _, doc := range realText(t) {
			for line := range strings.Lines(doc) {
				if plainASCII(line) {
					checkSplit(t, c, line)
				}
			}
		}
	}
}

func FuzzPretokenCount(f *testing.F) {
	f.Add("Hello, world! it's 12345 \n\n  x")
	f.Add("# H1\n- item 2\n[ref]: http://e.com\n")
	o200k, _ := New(O200kBase)
	cl100k, _ := New(Cl100kBase)
	f.Fuzz(func(t *testing.T, s string) {
		if !plainASCII(s) || len(s) > 4096 {
			return
		}
		checkSplit(t, o200k, s)
		checkSplit(t, cl100k, s)
	})
}

// TestSpaceRunPeriod checks the claim spaceRun rests on, on every length
// of a run of spaces to 4,096 with both encodings: the tokenizer's count
// of the run is spaceRun's.
func TestSpaceRunPeriod(t *testing.T) {
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, _ := New(enc)
		run := strings.Repeat(" ", 4096)
		for n := 1; n <= len(run); n++ {
			if got, want := c.spaceRun(n), whole(c, run[:n]); got != want {
				t.Fatalf("%s: %d spaces: spaceRun %d, tokenizer %d", enc, n, got, want)
			}
		}
	}
}
