package slice

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// fullParseHeadings is what Parse found before it stopped parsing every
// paragraph's inline markup: the top-level headings of goldmark's full
// parse, each with its level, first line and plain text. Parse must find the
// same.
func fullParseHeadings(src []byte) []string {
	d := &Document{src: src, lineStarts: lineStarts(src)}
	v := parseView(src, false)
	root := markdown().Parse(text.NewReader(v))
	var out []string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		start := headingStart(h)
		if start < 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%d %d %q", h.Level, d.lineOf(start), inlineText(h, v)))
	}
	return out
}

func blockParseHeadings(src []byte) []string {
	var out []string
	for _, h := range Parse(src).headings {
		if h.html {
			continue // goldmark's tree has an HTML block there, not a heading
		}
		out = append(out, fmt.Sprintf("%d %d %q", h.Level, h.Line, h.Title))
	}
	return out
}

func sameHeadings(t *testing.T, name string, src []byte) {
	t.Helper()
	want, got := fullParseHeadings(src), blockParseHeadings(src)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Fatalf("%s: heading %d: Parse found %s, the full parse %s (%d and %d headings)", name, i+1, g, w, len(got), len(want))
			}
		}
	}
}

// markupHeadings holds the cases where the two parses could part: inline
// markup in titles, link references defined elsewhere, setext headings over
// paragraphs, HTML lines that do and do not open blocks.
const markupHeadings = `[ref]: https://example.com "T"

# A [ref] and [link](u) and ![alt](i.png) and <b>bold</b> &amp; &#42; \*x\*

Some *para* text with <span>html</span> and [ref].

Setext *with markup*
and a second line  
===

<div>
# not a heading (inside an HTML block)
</div>

- <kbd>Ctrl</kbd> inline html in a list
<span>inline</span> at the start of a paragraph
# Heading after a paragraph

<custom-tag attr="x>y" other='a>b'>
# after a type 7 block opened by a tag with '>' in quoted values

<kbd>Ctrl</kbd>
# after a line that is a tag and more (no HTML block)

<custom-tag attr="x">
# a heading? type 7 cannot interrupt a paragraph, but this follows a blank line

text
<p>
interrupting html

## ` + "`code` in a heading" + ` ~~strike~~ <https://auto.link>

> quoted
> ---
> # quoted heading

para
---

Another
-------
`

func TestBlockParseMatchesFullParse(t *testing.T) {
	sameHeadings(t, "markup", []byte(markupHeadings))
	sameHeadings(t, "html", []byte(readmeHTML))
	var files []string
	for _, pat := range []string{"testdata/*.md", "../internal/bench/testdata/corpus/*.md", "../docs/*.md", "../*.md"} {
		fs, _ := filepath.Glob(pat)
		files = append(files, fs...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d documents to compare on", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameHeadings(t, f, src)
	}
}

func FuzzBlockParse(f *testing.F) {
	for _, b := range seedDocs(f) {
		f.Add(b)
	}
	f.Add([]byte(markupHeadings))
	f.Fuzz(func(t *testing.T, src []byte) {
		if Parse(src).CappedLines() > 0 {
			t.Skip("nests past MaxNesting: read as text on purpose")
		}
		sameHeadings(t, "input", src)
	})
}
