package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// realText is the repository's own markdown: READMEs, docs and the bench
// corpus, real prose with code, tables and lists.
func realText(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"../*.md", "../docs/*.md", "../internal/bench/testdata/corpus/*.md", "../examples/*.md"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d markdown files to test on, want several", len(out))
	}
	return out
}

// whole counts s in one piece with the tokenizer alone (its regular
// expression, no memo), the way Count did before it streamed.
func whole(c *Counter, s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		panic(err)
	}
	return n
}

// cutEverywhere makes every clean break a piece boundary for the test.
func cutEverywhere(t testing.TB) {
	old := chunkBytes
	chunkBytes = 1
	t.Cleanup(func() { chunkBytes = old })
}

func TestCleanBreaksCompose(t *testing.T) {
	// About 400 KB of documents of every kind: enough text for every
	// construct markdown has, little enough for the race detector.
	var docs []string
	size := 0
	for _, d := range realText(t) {
		if size < 400<<10 {
			docs = append(docs, d)
			size += len(d)
		}
	}
	cutEverywhere(t)
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range docs {
			breaks := 0
			for b := nextBreak(d, 1); b >= 0; b = nextBreak(d, b+1) {
				breaks++
			}
			if breaks < 10 {
				t.Fatalf("%s: document %d has %d clean breaks; the test would prove nothing", enc, i, breaks)
			}
			if got, want := c.Count(d), whole(c, d); got != want {
				t.Errorf("%s: document %d (%d bytes): counted in %d pieces %d, whole %d", enc, i, len(d), breaks+1, got, want)
			}
		}
	}
}

func TestCountJoinedAndWrapped(t *testing.T) {
	// Some of the documents: the wrappings are what is under test, and
	// TestCleanBreaksCompose reads more.
	var docs []string
	size := 0
	for i, d := range realText(t) {
		if i%4 == 0 && size < 150<<10 {
			docs = append(docs, d)
			size += len(d)
		}
	}
	c := Default()
	wraps := [][2]string{
		{"<context>\n", "</context>\n\n"},
		{"<context>\n", "\n</context>\n\n"},
		{"", ""},
		{"Task: x\n\n<document lines=\"3\">\n", "</document>\n\nTask:\nWhat?"},
		{"no newline before", "/ a slash after"},
		{"  ", "\n\n   \n"},
	}
	for i, d := range docs {
		ct := c.Counted(d)
		if ct.Tokens() != whole(c, d) {
			t.Fatalf("document %d: Counted %d, whole %d", i, ct.Tokens(), whole(c, d))
		}
		for _, w := range wraps {
			want := whole(c, w[0]+d+w[1])
			if got := ct.Wrapped(w[0], w[1]); got != want {
				t.Errorf("document %d wrapped in %q, %q: %d, want %d", i, w[0], w[1], got, want)
			}
			if got := c.CountJoined(w[0], d, w[1]); got != want {
				t.Errorf("document %d joined with %q, %q: %d, want %d", i, w[0], w[1], got, want)
			}
		}
	}
}

// TestCountBoundedPieces: counting 1 MB hands the tokenizer pieces of about
// chunkBytes, never the whole text, so its copy of its input (a []rune, four
// bytes a character) and its matches stay that size. Before, the one piece
// was the text: 22 MB of heap at peak for 4.8 MB.
func TestCountBoundedPieces(t *testing.T) {
	doc := strings.Join(realText(t), "\n")
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(doc)
	}
	big := b.String()
	longest := 0
	for _, l := range strings.Split(big, "\n") {
		longest = max(longest, len(l))
	}
	largest, pieces := 0, 0
	pieceHook = func(n int) { largest, pieces = max(largest, n), pieces+1 }
	defer func() { pieceHook = nil }()
	n := Default().Count(big)
	if limit := chunkBytes + 2*longest + 2; largest > limit || pieces < len(big)/(2*chunkBytes) {
		t.Errorf("counted %d bytes (%d tokens) in %d pieces, the largest %d bytes; want pieces of at most %d", len(big), n, pieces, largest, limit)
	}
}

func FuzzCleanBreaks(f *testing.F) {
	for _, s := range []string{"a\nb", "x.\n/y", "# T\n\n- a\n- b\n", "  \n\nword", "é\nñ\n\r\nz", ".\n\n\n/\n#", "\xff\n\xfeq\nz", "a\n's b\n\u0301x\n\u00a0y\n123\n/z\n\t\nq", "end.\n\n", "\n\n\nA\n \nB", "x\r\n\r\nY\rZ", "日本\n語\nÉté\n—dash\n«q»", "- a\n  - b\n    - c\n", "x.\n  /y\n\t/z", "a \n  \n  b\n \t\n\tc", "a\n \u00a0b\n  \u0301c\n   \r\nd", "if x {\n\treturn\n\t}\n"} {
		f.Add(s, "<p>\n", "\n</p>")
	}
	old := chunkBytes
	chunkBytes = 1
	defer func() { chunkBytes = old }()
	o200k, cl100k := Default(), ForModel("gpt-4")
	f.Fuzz(func(t *testing.T, s, pre, suf string) {
		for _, c := range []*Counter{o200k, cl100k} {
			if got, want := c.Count(s), whole(c, s); got != want {
				t.Fatalf("%s: Count(%q) = %d in pieces, %d whole", c.Encoding(), s, got, want)
			}
			if got, want := c.Counted(s).Wrapped(pre, suf), whole(c, pre+s+suf); got != want {
				t.Fatalf("%s: Wrapped(%q, %q, %q) = %d, whole %d", c.Encoding(), pre, s, suf, got, want)
			}
		}
	})
}

func TestMetered(t *testing.T) {
	var n atomic.Int64
	c := Default().Metered(&n)
	doc := realText(t)[0]
	ct := c.Counted(doc)
	if ct.Tokens() != Default().Count(doc) || n.Load() != int64(len(doc)) {
		t.Fatalf("Counted: %d tokens (want %d), %d bytes metered of %d", ct.Tokens(), Default().Count(doc), n.Load(), len(doc))
	}
	n.Store(0)
	ct.Wrapped("<context>\n", "</context>\n")
	if got := n.Load(); got >= int64(len(doc))/2 {
		t.Errorf("Wrapped tokenized %d bytes of a %d-byte text again", got, len(doc))
	}
}

// TestIndentedBreaksCompose counts random lines behind random indentation,
// in pieces cut at every clean break and whole, with both encodings: a
// break before indentation is clean only when the indentation holds no
// other line break and ends in a character no pre-token joins to it.
func TestIndentedBreaksCompose(t *testing.T) {
	indents := []string{"", " ", "  ", "    ", "\t", " \t ", "        ", strings.Repeat(" ", 300)}
	starts := []string{"- item", "x", "/path", "//", "' s", "'s", "\u00a0nbsp", "\u0301mark", "é", "12", "", "\r", "*", "日本", "\v", "\f", ".", "\xff"}
	ends := []string{"\n", "\n", "\n", "\r\n", " \n", ".\n", "\n\n", "/\n"}
	rng := rand.New(rand.NewPCG(3, 7))
	cutEverywhere(t)
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			var b strings.Builder
			for range 1 + rng.IntN(12) {
				b.WriteString(indents[rng.IntN(len(indents))])
				b.WriteString(starts[rng.IntN(len(starts))])
				b.WriteString(ends[rng.IntN(len(ends))])
			}
			d := b.String()
			if got, want := c.Count(d), whole(c, d); got != want {
				t.Fatalf("%s: document %d %q: counted in pieces %d, whole %d", enc, i, d, got, want)
			}
			if got, want := c.Counted(d).Wrapped("<p>\n", "\n</p>"), whole(c, "<p>\n"+d+"\n</p>"); got != want {
				t.Fatalf("%s: document %d %q: wrapped %d, whole %d", enc, i, d, got, want)
			}
		}
	}
}

// TestNestedListCountedOnce indexes a nested list, each line indented
// deeper than the one before, and counts a part of it from the index: only
// the part's ends are read again, not the part.
func TestNestedListCountedOnce(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		b.WriteString(strings.Repeat(" ", 2*i) + "- item\n")
	}
	d := b.String()
	var read atomic.Int64
	c := Default().Metered(&read)
	ct := c.Indexed(d)
	if got, want := ct.Tokens(), whole(Default(), d); got != want {
		t.Fatalf("indexed %d, whole %d", got, want)
	}
	read.Store(0)
	part := d[len(d)/4 : 3*len(d)/4]
	if got, want := ct.Count(part), whole(Default(), part); got != want {
		t.Fatalf("part from the index: %d, whole %d", got, want)
	}
	if n := read.Load(); n > 4<<10 {
		t.Errorf("counting a part of %d bytes read %d bytes again; want only its ends (a line each, under 4 KiB)", len(part), n)
	}
}

// TestSpaceRunsCountedOnce: a run of spaces is counted as the tokenizer
// counts it, first and again from what was remembered of its length (or,
// for a long run, of a shorter one).
func TestSpaceRunsCountedOnce(t *testing.T) {
	for _, enc := range []Encoding{O200kBase, Cl100kBase} {
		c, err := New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{minSpaceRun, 100, 2000, 6001} {
			run := strings.Repeat(" ", n)
			want, err := c.codec.Count(run)
			if err != nil {
				t.Fatal(err)
			}
			first := c.Count(run)
			// A longer run is counted from the run of its length less a
			// multiple of spaceLoop (see spaceRun).
			if got, ok := spaceCounts.get(enc, n); n <= 2*spaceLoop && (!ok || got != want) {
				t.Errorf("%s: %d spaces remembered as %d, %v; the tokenizer says %d", enc, n, got, ok, want)
			}
			if second := c.Count(strings.Clone(run)); first != want || second != want {
				t.Errorf("%s: %d spaces counted %d then %d, the tokenizer says %d", enc, n, first, second, want)
			}
		}
	}
}
