// Package docscheck reads baton's markdown documentation as a reader meets
// it, so that tests can hold README.md and docs/ to their rules: sentences a
// reader takes in at once, and relative links that lead somewhere.
package docscheck

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Sentence is one sentence of running text: a paragraph's or a list
// item's, never a heading's, a table's or a code block's.
type Sentence struct {
	Line  int // 1-based line of the paragraph it starts in
	Words int
	Text  string
}

// Link is one link destination as written, with the line it is on.
type Link struct {
	Line int
	Dest string
}

// Doc is what the checks need of one markdown file.
type Doc struct {
	Sentences []Sentence
	Links     []Link
	// Anchors holds the fragment of every heading as GitHub renders it.
	Anchors map[string]bool
}

var md = goldmark.New(goldmark.WithExtensions(extension.Table))

// Parse reads one markdown file.
func Parse(src []byte) *Doc {
	d := &Doc{Anchors: map[string]bool{}}
	root := md.Parser().Parse(text.NewReader(src))
	slugs := map[string]int{}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			return ast.WalkSkipChildren, nil
		case *ast.Heading:
			var b strings.Builder
			d.inline(n, src, &b, lineOf(src, n), true)
			d.Anchors[uniqueSlug(slugs, Slug(b.String()))] = true
			return ast.WalkSkipChildren, nil
		case *extast.Table:
			var b strings.Builder
			d.inline(n, src, &b, lineOf(src, n), false)
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph, *ast.TextBlock:
			var b strings.Builder
			line := lineOf(src, n)
			d.inline(n, src, &b, line, false)
			for _, s := range Split(b.String()) {
				s.Line = line
				d.Sentences = append(d.Sentences, s)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return d
}

// inline writes the text of n's inline children to b, a code span as one
// word, and records the links it holds.
func (d *Doc) inline(n ast.Node, src []byte, b *strings.Builder, line int, heading bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			if heading {
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if s, ok := t.(*ast.Text); ok {
						b.Write(s.Segment.Value(src))
					}
				}
				continue
			}
			// One word that cannot end a sentence: a code span is read
			// as a name, whatever its length or its dots.
			b.WriteString(codeWord)
		case *ast.Link:
			d.Links = append(d.Links, Link{Line: line, Dest: string(c.Destination)})
			d.inline(c, src, b, line, heading)
		case *ast.Image:
			d.Links = append(d.Links, Link{Line: line, Dest: string(c.Destination)})
		case *ast.AutoLink:
			b.WriteString("link")
		default:
			d.inline(c, src, b, line, heading)
		}
	}
}

// codeWord stands for a code span in the text Split reads.
const codeWord = "\x00"

// lineOf returns the 1-based line a block starts on.
func lineOf(src []byte, n ast.Node) int {
	for ; n != nil; n = n.FirstChild() {
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return bytes.Count(src[:n.Lines().At(0).Start], []byte("\n")) + 1
		}
		if t, ok := n.(*ast.Text); ok {
			return bytes.Count(src[:t.Segment.Start], []byte("\n")) + 1
		}
	}
	return 0
}

// Split cuts running text into sentences: a word ending in ".", "!" or
// "?" (before any closing bracket, quote or emphasis) ends one, except the
// abbreviations that never end one. Words are counted as a reader counts
// them: a run of punctuation alone ("—", "→") is not a word.
func Split(s string) []Sentence {
	var out []Sentence
	var cur []string
	words := 0
	flush := func() {
		if words > 0 {
			out = append(out, Sentence{Words: words, Text: strings.ReplaceAll(strings.Join(cur, " "), codeWord, "`…`")})
		}
		cur, words = nil, 0
	}
	for _, w := range strings.Fields(s) {
		cur = append(cur, w)
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == 0 }) >= 0 {
			words++
		}
		if endsSentence(w) {
			flush()
		}
	}
	flush()
	return out
}

var abbreviations = map[string]bool{"e.g.": true, "i.e.": true, "vs.": true, "cf.": true}

func endsSentence(w string) bool {
	t := strings.TrimRight(w, `)]"'”’*_`)
	if abbreviations[strings.ToLower(strings.TrimLeft(t, `("'“‘*_`))] {
		return false
	}
	return strings.HasSuffix(t, ".") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?")
}

// Slug is the fragment GitHub gives a heading with this text: lower case,
// spaces as hyphens, every other character but letters, digits, "-" and
// "_" dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// uniqueSlug numbers a repeated slug as GitHub does: the second "notes"
// is "notes-1".
func uniqueSlug(seen map[string]int, s string) string {
	n, ok := seen[s]
	seen[s] = n + 1
	if !ok {
		return s
	}
	return s + "-" + strconv.Itoa(n)
}
