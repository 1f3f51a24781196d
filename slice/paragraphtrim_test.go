package slice

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// lineRecorder is a paragraph transformer that notes the most lines a
// paragraph held when it closed.
type lineRecorder struct{ most *int }

func (r lineRecorder) Transform(node *ast.Paragraph, _ text.Reader, _ parser.Context) {
	*r.most = max(*r.most, node.Lines().Len())
}

// TestLongParagraphBoundedMemory: the structure pass's block parsers hold
// a bounded number of a long paragraph's line records (they held one for
// each of five million one-letter lines, hundreds of MB), and the heading
// after it is still found.
func TestLongParagraphBoundedMemory(t *testing.T) {
	const n = 1_000_000
	src := strings.Repeat("x\n", n) + "\n# After\n"
	most := 0
	p := parser.NewParser(parser.WithBlockParsers(structureBlockParsers()...),
		parser.WithParagraphTransformers(util.Prioritized(lineRecorder{&most}, 1)))
	pc := parser.NewContext()
	pc.Set(headingCapKey, &headingCap{})
	p.Parse(text.NewReader([]byte(src)), parser.WithContext(pc))
	if most > 2*maxParagraphLines {
		t.Errorf("a paragraph of %d lines closed holding %d of them; want at most %d", n, most, 2*maxParagraphLines)
	}
	d := ParseString(src)
	if hs := d.Outline(); len(hs) != 1 || hs[0].Title != "After" || hs[0].Line != n+2 {
		t.Fatalf("outline %+v; want the heading After on line %d", hs, n+2)
	}
}

// TestLongParagraphSetextAndDefinitions: a trimmed paragraph still makes a
// setext heading at the right lines, and a paragraph that opens with link
// reference definitions is kept whole, so every one of them still resolves.
func TestLongParagraphSetextAndDefinitions(t *testing.T) {
	n := 3 * maxParagraphLines
	d := ParseString("first\n" + strings.Repeat("x\n", n) + "last\n===\n\ntext\n")
	hs := d.Outline()
	if len(hs) != 1 || hs[0].Line != 1 || !strings.HasPrefix(hs[0].Title, "first x") || !strings.HasSuffix(hs[0].Title, "x last") {
		t.Fatalf("setext heading over %d lines: got %d headings, first %+v", n+2, len(hs), hs)
	}
	if got, want := d.LinesText(hs[0].Line, hs[0].EndLine), "first\n"+strings.Repeat("x\n", n)+"last\n===\n\ntext"; got != want {
		t.Errorf("the section's text is not the whole document")
	}
	var b strings.Builder
	for i := range n {
		b.WriteString("[r" + strings.Repeat("a", i%7) + "]: /u\n")
	}
	b.WriteString("x\n\n# [ra] and [raaaaaa]\n")
	if hs := ParseString(b.String()).Outline(); len(hs) != 1 || hs[0].Title != "ra and raaaaaa" {
		t.Errorf("heading after %d definitions: %+v; want %q", n, hs, "ra and raaaaaa")
	}
}
