package slice

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// topBlocks parses src with p and returns each top-level block's kind and
// where its lines start (-1 when it has none), and how many list items the
// tree holds.
func topBlocks(p parser.Parser, src []byte) ([]string, int) {
	root := p.Parse(text.NewReader(src))
	var out []string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		start := -1
		if n.Type() != ast.TypeDocument && n.Lines().Len() > 0 {
			start = n.Lines().At(0).Start
		}
		if h, ok := n.(*ast.Heading); ok {
			start = headingStart(h)
		}
		out = append(out, fmt.Sprintf("%s@%d", n.Kind(), start))
	}
	items := 0
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && n.Kind() == ast.KindListItem {
			items++
		}
		return ast.WalkContinue, nil
	})
	return out, items
}

// TestListItemPruneKeepsBlocks: with the earlier items of a list dropped as
// the parse goes, the document's top-level blocks are the same as with
// every item kept, on real documents and on lists of every shape, and a
// long list holds one item at the end, not thousands.
func TestListItemPruneKeepsBlocks(t *testing.T) {
	full := parser.NewParser(parser.WithBlockParsers(blockParsers()...), parser.WithHeadingAttribute(),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(), linkRefTransformer, util.Prioritized(dropParagraphText{}, 1000))...))
	docs := []string{
		"- a\n- b\n\n# H\n",
		"- a\n-\n\n- c\n# H\n",
		"-\n\n  x\n- y\n\n## H\n",
		"1. a\n2. b\n   - c\n   - d\n\n     more\n3. e\nlazy\n# H\n",
		"- a\n\n  ```\n  # not\n  ```\n- b\n# H\n",
		"* a\n+ b\n- c\n\nText\n===\n",
		"- [ref]: http://x\n- b\n\n# [ref]\n",
		"- a\n    - b\n        - c\n<div>\n</div>\n# H {#id}\n",
	}
	files, _ := filepath.Glob("../docs/*.md")
	more, _ := filepath.Glob("../internal/bench/testdata/corpus/*.md")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if len(docs) < 12 {
		t.Fatalf("only %d documents", len(docs))
	}
	for i, d := range docs {
		got, _ := topBlocks(blocksOnly(), []byte(d))
		want, _ := topBlocks(full, []byte(d))
		if !slices.Equal(got, want) {
			t.Errorf("document %d: top-level blocks %v, want %v", i, got, want)
		}
	}
	long := strings.Repeat("- item\n", 10_000) + "\n# After\n"
	blocks, items := topBlocks(blocksOnly(), []byte(long))
	if items != 1 || len(blocks) != 2 {
		t.Errorf("a list of 10,000 items: %d items held, blocks %v; want 1 item, a list and a heading", items, blocks)
	}
}
