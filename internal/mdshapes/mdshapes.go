// Package mdshapes builds markdown documents of the shapes that are cheap to
// write and costly to parse naively: a million headings, one line of
// 100,000 '>', thousands of nested list items and the like. baton's
// structure pass must stay linear in their size; the benchmarks of the
// assembler and of ask --dry-run run over them.
package mdshapes

import (
	"bytes"
	"fmt"
	"strings"
)

// Shape is one pathological document.
type Shape struct {
	Name string
	// Build returns the document, about the size Name says.
	Build func() []byte
}

// All returns every shape, each of a few MB to about 10 MB: well under the
// 64 MiB a document may be.
func All() []Shape {
	return []Shape{
		{"headings-1m", headings},
		{"quotes-line-100k", func() []byte { return []byte(strings.Repeat(">", 100_000) + "\n") }},
		{"nested-list-3k", nestedList},
		{"list-items-1m", listItems},
		{"nested-quotes", nestedQuotes},
		{"table-300k-rows", table},
		{"single-line-10mb", func() []byte { return []byte(strings.Repeat("word ", 2_000_000) + "\n") }},
		{"unclosed-fences", fences},
		{"link-refs-300k", linkRefs},
		{"nested-emphasis", emphasis},
		{"setext-1m", setext},
		{"long-word-10mb", longWord},
		{"nested-brackets", brackets},
		{"heading-brackets", headingBrackets},
		{"html-comment-10mb", htmlComment},
		{"html-comment-lines", htmlCommentLines},
		{"short-lines-5m", func() []byte { return []byte(strings.Repeat("x\n", 5_000_000)) }},
		{"blank-lines-10m", func() []byte { return []byte("a\n" + strings.Repeat("\n", 10_000_000) + "b\n") }},
	}
}

func lines(n int, f func(b *bytes.Buffer, i int)) []byte {
	var b bytes.Buffer
	for i := range n {
		f(&b, i)
	}
	return b.Bytes()
}

// headings is 1M ATX headings in about 9.9 MB.
func headings() []byte {
	return lines(1_000_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "# H%d\n", i) })
}

// nestedList is 3,000 list items, each nested in the one before: 9 MB,
// nearly all of it indentation.
func nestedList() []byte {
	return lines(3000, func(b *bytes.Buffer, i int) {
		b.WriteString(strings.Repeat(" ", 2*i))
		b.WriteString("- item\n")
	})
}

func listItems() []byte {
	return lines(1_000_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "- item %d\n", i) })
}

// nestedQuotes is 10,000 lines of block quotes nested up to 1,000 deep.
func nestedQuotes() []byte {
	return lines(10_000, func(b *bytes.Buffer, i int) {
		b.WriteString(strings.Repeat(">", i%1000))
		b.WriteString(" q\n")
	})
}

func table() []byte {
	head := "| a | b | c |\n|---|---|---|\n"
	return append([]byte(head), lines(300_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "| %d | x | y |\n", i) })...)
}

// fences is 200,000 code fences of different lengths, none closed.
func fences() []byte {
	return lines(200_000, func(b *bytes.Buffer, i int) {
		b.WriteString(strings.Repeat("`", 3+i%20))
		fmt.Fprintf(b, "%d\ncode\n", i)
	})
}

func linkRefs() []byte {
	d := lines(300_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "[ref%d]: http://example.com/%d\n", i, i) })
	return append(d, "# [ref1] title\n"...)
}

// emphasis is a heading and a paragraph of openers that never close:
// emphasis, strong and brackets.
func emphasis() []byte {
	return []byte("# " + strings.Repeat("*a _b [c ", 100_000) + "\n\n" + strings.Repeat("*a _b [c ", 1_000_000) + "\n")
}

// setext is 1M setext headings (a title line and its underline) in about
// 10 MB: they open sections as ATX headings do.
func setext() []byte {
	return lines(1_000_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "H%d\n=\n", i) })
}

// longWord is one word of 10 MB: lower-case letters with no space, line
// break or punctuation, which the tokenizers read as one pre-token. The
// letters are pseudo-random, so the word repeats no pattern a counter could
// lean on.
func longWord() []byte {
	b := make([]byte, 10_000_000, 10_000_001)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = 'a' + byte((x>>16)%26)
	}
	return append(b, '\n')
}

// brackets is a paragraph of 5M '[' and then 5M ']': links nested millions
// deep.
func brackets() []byte {
	return []byte(strings.Repeat("[", 5_000_000) + strings.Repeat("]", 5_000_000) + "\n")
}

// headingBrackets is 2,600 headings of 3,800 nested brackets each, just
// under the 4 KiB past which a heading's inline markup is not reduced.
func headingBrackets() []byte {
	return lines(2600, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, "# %s%d%s\n", strings.Repeat("[", 1900), i, strings.Repeat("]", 1900))
	})
}

// htmlComment is one HTML comment of 10 MB on one line.
func htmlComment() []byte {
	return []byte("<!-- " + strings.Repeat("x", 10_000_000) + " -->\n")
}

// htmlCommentLines is one HTML comment over 500,000 lines.
func htmlCommentLines() []byte {
	d := lines(500_000, func(b *bytes.Buffer, i int) { fmt.Fprintf(b, "line %d of a comment\n", i) })
	return append(append([]byte("<!--\n"), d...), "-->\n"...)
}
