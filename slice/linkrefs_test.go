package slice

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/baton-dev/baton/internal/mdshapes"
)

// TestLinkRefsLinear parses 300,000 link reference definitions in one
// paragraph: every one is taken a line at a time, so goldmark's own
// transformer, which moves the paragraph's remaining lines once per
// definition it takes, is left none of them; and the heading after them
// still resolves its reference.
func TestLinkRefsLinear(t *testing.T) {
	var doc []byte
	for _, s := range mdshapes.All() {
		if s.Name == "link-refs-300k" {
			doc = s.Build()
		}
	}
	if doc == nil {
		t.Fatal("no link-refs-300k shape")
	}
	taken := 0
	linkRefLineHook = func() { taken++ }
	defer func() { linkRefLineHook = nil }()
	d := Parse(doc)
	if taken != 300_000 {
		t.Errorf("definitions taken a line at a time = %d, want 300000 (the rest cost goldmark a move of every later line each)", taken)
	}
	if got := d.Outline(); len(got) != 1 || got[0].Title != "ref1 title" {
		t.Errorf("outline = %+v, want one heading %q", got, "ref1 title")
	}
}

// refsOf parses src with p and returns its link references as text.
func refsOf(p parser.Parser, src string) []string {
	pc := parser.NewContext()
	p.Parse(text.NewReader([]byte(src)), parser.WithContext(pc))
	var out []string
	for _, r := range pc.References() {
		out = append(out, fmt.Sprintf("%q -> %q %q", r.Label(), r.Destination(), r.Title()))
	}
	sort.Strings(out) // References comes from a map
	return out
}

// plainGoldmark is goldmark's default parser, without baton's transformer.
func plainGoldmark() parser.Parser { return goldmark.DefaultParser() }

var linkRefCases = []string{
	"[a]: /a\n[b]: /b\n[c]: /c\n\n# [a] [b] [c]\n",
	"[a]: /a\n\"title on the next line\"\n[b]: /b\n",
	"[a]: /a\n  'title'\n[b]: /b\n",
	"[a]: /a\n(title)\ntext\n",
	"[a]: /a \"t\"\n[b]: /b 't'\n[c]: /c (t)\n[d]: /d\n",
	"[a]: /a \"unclosed\n[b]: /b\"\n[c]: /c\n",
	"[a]: /a\n[a]: /second\n",
	"[A]: /a\n[ a ]: /b\n[b]:\n/on-next-line\n[c]: /c\n",
	"[a]: /a\ntext\n[b]: /b\n",
	"[a]: <with space>\n[b]: /b\n",
	"[a]: /a \"t\" junk\n[b]: /b\n",
	"[a]: /a(b\n[b]: /b\n",
	"[multi\nline]: /m\n[c]: /c\n",
	"[a]: /a\n[b]: /b\n===\n",
	"[a]: /a\n[b]: /b\n---\n",
	"> [a]: /a\n> [b]: /b\n\n- [c]: /c\n  [d]: /d\n",
	"    [a]: /code\n[b]: /b\n",
	"[a]:/a\n[b]:\t/b\t\n[c]: /c \r\n[d]: /d\r\n",
	"[a]: /a\n[]: /empty\n[b]: /b\n",
	"[a]: /a\n[b]: /b 'it\\'s'\n[c]: /c\n",
}

// TestLinkRefsAsGoldmark checks that definitions taken a line at a time
// give the references goldmark alone gives, and the same headings.
func TestLinkRefsAsGoldmark(t *testing.T) {
	for _, src := range linkRefCases {
		want := refsOf(plainGoldmark(), src)
		if got := refsOf(markdown(), src); !cmp.Equal(got, want) {
			t.Errorf("%q: references differ (-goldmark +baton):\n%s", src, cmp.Diff(want, got))
		}
		if got := refsOf(blocksOnly(), src); !cmp.Equal(got, want) {
			t.Errorf("%q: block parse references differ (-goldmark +baton):\n%s", src, cmp.Diff(want, got))
		}
	}
}

func FuzzLinkRefLines(f *testing.F) {
	for _, c := range linkRefCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 || strings.Count(src, "\n") > 200 {
			return
		}
		want := refsOf(plainGoldmark(), src)
		if got := refsOf(markdown(), src); !cmp.Equal(got, want) {
			t.Fatalf("%q: references differ (-goldmark +baton):\n%s", src, cmp.Diff(want, got))
		}
	})
}
