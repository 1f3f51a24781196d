package outline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// generated returns a markdown document of about size bytes: headings six
// levels deep, paragraphs, lists and code, the same for the same seed.
func generated(size int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("the board sets prices yearly and reviews each plan against revenue growth cost risk margin region team quarter supplier contract")
	sentence := func() string {
		n := 6 + r.IntN(20)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.ToUpper(ws[0][:1]) + strings.Join(ws, " ")[1:] + "."
	}
	var b strings.Builder
	level, n := 1, 0
	for b.Len() < size {
		n++
		fmt.Fprintf(&b, "%s Heading %d\n\n", strings.Repeat("#", level), n)
		for p := r.IntN(4); p >= 0; p-- {
			for s := r.IntN(6); s >= 0; s-- {
				b.WriteString(sentence())
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		if r.IntN(5) == 0 {
			b.WriteString("- " + sentence() + "\n- " + sentence() + "\n\n```\nx = 1\n```\n\n")
		}
		// Wander down and up so every depth holds many sections.
		switch d := r.IntN(3); {
		case d == 0 && level < 6:
			level++
		case d == 1 && level > 1:
			level -= 1 + r.IntN(level-1)
		}
	}
	return b.String()
}

// TestCountsEachByteOnce shows that sizes of nested sections are sums, not
// re-counts: a document nested six deep is counted for about its own length
// plus the outline's own lines, where counting every section's whole text
// would count the deepest text six times.
func TestCountsEachByteOnce(t *testing.T) {
	var b strings.Builder
	for level := 1; level <= 6; level++ {
		fmt.Fprintf(&b, "%s Level %d\n\n%s\n\n", strings.Repeat("#", level), level, strings.Repeat("Nested text of this level. ", 4000))
	}
	src := b.String()
	for _, budget := range []int{0, 2000, 900} {
		c := &byteCounter{}
		o := build(t, src, c, budget)
		headings := o.Documents[0].Headings
		// Document text: once. Outline parts (each entry's line in pieces,
		// the four headers) and the rendered outline for each try: bounded
		// by the outline's size, which does not grow with the text.
		fullOutline := build(t, src, &byteCounter{}, 0)
		full := fullOutline.Text()
		limit := len(src) + 6*len(full) + 2*o.MaxDepth*len(full)
		if c.bytes > limit || c.bytes < len(src) {
			t.Errorf("budget %d: counted %d bytes for a %d-byte document (limit %d)", budget, c.bytes, len(src), limit)
		}
		if c.bytes >= 2*len(src) {
			t.Errorf("budget %d: counted %d bytes, twice the document or more: nested text was counted again", budget, c.bytes)
		}
		// Calls: one per section and the preamble, three per entry's parts,
		// four headers, and one per rendering tried; a section too large
		// to send whole is counted by its listed passages instead, and its
		// passage lines are one more part.
		large := 0
		for _, e := range fullOutline.all {
			if len(e.Passages) > 0 {
				large++
			}
		}
		if maxCalls := headings + 1 + 3*headings + 4 + 2*o.MaxDepth + (maxSectionPassages+1)*large; c.calls > maxCalls {
			t.Errorf("budget %d: %d counter calls, want at most %d", budget, c.calls, maxCalls)
		}
	}
}

// TestLargeDocumentSumsMatch checks on a generated one-megabyte document
// that every section's size is exactly its bytes and the document's is the
// whole file, with bytes as tokens.
func TestLargeDocumentSumsMatch(t *testing.T) {
	src := generated(1<<20, 7)
	c := &byteCounter{}
	o := build(t, src, c, 0)
	if o.Documents[0].Tokens != len(src) {
		t.Errorf("document size %d, want %d", o.Documents[0].Tokens, len(src))
	}
	ls := strings.SplitAfter(src, "\n")
	offs := make([]int, len(ls)+1)
	for i, l := range ls {
		offs[i+1] = offs[i] + len(l)
	}
	for _, e := range o.Entries {
		if w := offs[e.EndLine] - offs[e.Line-1]; e.Tokens != w {
			t.Fatalf("%s: size %d, want %d", e.Path, e.Tokens, w)
		}
	}
	if o.MaxDepth != 6 {
		t.Errorf("max depth %d, want 6", o.MaxDepth)
	}
}

func BenchmarkBuild(b *testing.B) {
	src := generated(4<<20, 1)
	doc := slice.Parse([]byte(src))
	c := tokens.Default()
	full, err := Build([]Source{{Name: "big.md", Doc: doc}}, c, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		budget int
	}{{"nobudget", 0}, {"halfoutline", full.Tokens / 2}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				o, err := Build([]Source{{Name: "big.md", Doc: doc}}, c, bc.budget)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(o.Tokens), "outline-tokens")
				b.ReportMetric(float64(len(o.Entries)), "entries")
			}
		})
	}
}

// FuzzBuild: any bytes outline without a panic, sizes add up to the whole
// document, and every shown pointer finds its own entry.
func FuzzBuild(f *testing.F) {
	f.Add(sample)
	f.Add("# A\n## A\n# A\nx\n")
	f.Add("---\ntitle: x\n---\n# H\r\ntext\r\n")
	f.Add("Setext\n===\n\n# \n## Notes (2)\n## Notes\n## Notes\n")
	f.Fuzz(func(t *testing.T, src string) {
		c := &byteCounter{}
		o, err := Build([]Source{{Name: "f.md", Doc: slice.Parse([]byte(src))}}, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if o.Documents[0].Tokens != len(src) {
			t.Errorf("document size %d, want %d", o.Documents[0].Tokens, len(src))
		}
		seen := map[string]bool{}
		for _, e := range o.Entries {
			p := normPointer(o.Pointer(e))
			if seen[p] {
				t.Errorf("path %q is not unique", p)
			}
			seen[p] = true
			if got, ok := o.Lookup(o.Pointer(e)); !ok || got.Line != e.Line {
				t.Errorf("Lookup(%q) = %+v, %v", o.Pointer(e), got, ok)
			}
		}
	})
}
