package slice

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// checkCombined asserts what Combine promises for any input: the combined
// document's top-level headings are exactly the files' names, in order, each
// at its part's StartLine; and every line of every file maps back to itself
// through Part.SourceLine, unchanged unless Combine rewrote it (a heading
// moved down a level, front matter made a fence).
func checkCombined(t *testing.T, docs []NamedDoc) {
	t.Helper()
	combined, parts := Combine(docs)
	c := Parse(combined)
	var top []Heading
	for _, h := range c.headings {
		if h.Level == 1 {
			top = append(top, h)
		}
	}
	if len(parts) != len(docs) || len(top) != len(docs) {
		t.Fatalf("%d files gave %d parts and %d top-level headings %+v in:\n%s", len(docs), len(parts), len(top), top, show(combined))
	}
	lines := c.Lines()
	for i, p := range parts {
		if top[i].Title != p.Name || top[i].Line != p.StartLine || p.Name != docs[i].Name {
			t.Fatalf("top-level heading %d is %q at line %d, want %q at line %d in:\n%s", i, top[i].Title, top[i].Line, p.Name, p.StartLine, show(combined))
		}
		src, _ := parseContext(context.Background(), string(docs[i].Data), isMDXName(docs[i].Name))
		srcLines := src.Lines()
		if p.EndLine != p.StartLine+len(srcLines) {
			t.Fatalf("part %q ends at line %d, want %d (%d file lines after line %d)", p.Name, p.EndLine, p.StartLine+len(srcLines), len(srcLines), p.StartLine)
		}
		if _, ok := p.SourceLine(p.StartLine); ok {
			t.Fatalf("part %q: the added heading maps to a file line", p.Name)
		}
		if _, ok := p.SourceLine(p.EndLine + 1); ok {
			t.Fatalf("part %q: the line after it maps to a file line", p.Name)
		}
		rewritten := map[int]bool{}
		for _, h := range src.headings {
			for l := h.Line; l <= max(h.Line, h.rawEnd); l++ {
				rewritten[l] = true
			}
		}
		if end := frontMatterEnd(docs[i].Data); end > 0 {
			rewritten[1], rewritten[src.lineOf(end-1)] = true, true
		}
		for k, l := range srcLines {
			got, ok := p.SourceLine(p.StartLine + k + 1)
			if !ok || got != k+1 {
				t.Fatalf("part %q: combined line %d maps to %d, %v; want file line %d", p.Name, p.StartLine+k+1, got, ok, k+1)
			}
			if cl := lines[p.StartLine+k]; cl != l && !rewritten[k+1] {
				t.Fatalf("part %q line %d: %q became %q", p.Name, k+1, l, cl)
			}
		}
	}
}

func show(b []byte) string {
	var out bytes.Buffer
	for i, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 {
			fmt.Fprintf(&out, "%4d %q\n", i+1, l)
		}
	}
	return out.String()
}

// TestCombineKeepsEveryHeading: whatever block a file ends inside, the next
// file's heading is a top-level heading of the combined document.
func TestCombineKeepsEveryHeading(t *testing.T) {
	endings := map[string]string{
		"backtick fence":       "```go\n# inside\n",
		"long backtick fence":  "``````\ncode\n",
		"tilde fence":          "~~~\n# inside",
		"indented fence":       "   ~~~~~ info\n",
		"fence in a list":      "- a\n\n  ```\n  code\n",
		"fence in a quote":     "> ```\n> code\n",
		"html comment":         "<!-- never closed\n",
		"html script":          "<script>\nvar x;\n",
		"html pre":             "<pre>\n",
		"html style":           "<style>\n",
		"html textarea":        "<textarea>\n",
		"html processing":      "<?php\n",
		"html declaration":     "<!DOCTYPE html\n",
		"html cdata":           "<![CDATA[\n",
		"html div":             "<div\n",
		"html p":               "<p\n",
		"html div closed tag":  "<div>\ntext\n",
		"html custom tag":      "<custom-tag attr=\"x\">\n",
		"html closing tag":     "</custom>\n",
		"html no newline":      "<div>",
		"html in a quote":      "> <div>\n",
		"html in a list":       "- <div>\n",
		"link reference":       "[a]: /url\n",
		"link reference title": "[a]: /url \"open\n",
		"list item":            "- item\n",
		"ordered list":         "1. item\n   more\n",
		"block quote":          "> quoted\n",
		"indented code":        "    code\n",
		"table":                "| a | b |\n|---|---|\n| 1 | 2 |\n",
		"no trailing newline":  "text",
		"setext looking":       "text\n",
		"setext underline":     "===\n",
		"thematic break":       "---\n",
		"front matter":         "---\ntitle: x\n---\n",
		"front matter fence":   "---\n~~~~~\n# comment\n---\n",
		"crlf fence":           "```\r\ncode\r\n",
		"crlf html":            "<div>\r\n",
		"lone cr":              "<div>\rtext\r",
		"empty":                "",
		"blank lines":          "\n\n\n",
		"trailing spaces":      "text  \n",
		"backslash":            "text\\\n",
		"heading":              "# Own\n",
		"setext heading":       "Own\n---\n",
	}
	for name, ending := range endings {
		t.Run(name, func(t *testing.T) {
			checkCombined(t, []NamedDoc{
				{Name: "a.md", Data: []byte(ending)},
				{Name: "b.md", Data: []byte("# B\ntext\n")},
				{Name: "c.md", Data: []byte(ending)},
				{Name: "d.md", Data: []byte(ending)},
			})
		})
	}
}

// TestCombineHeadingReadsTheName: a file's section is titled by its name
// exactly, whatever markdown the name happens to hold.
func TestCombineHeadingReadsTheName(t *testing.T) {
	names := []string{"_draft_.md", "*notes*.md", "a #", "#", "###", "C# notes", "x&amp;y.md", "<b>bold</b>.md",
		"`code`.md", "[link](x).md", "a\\", "docs/a_b_c.md", "-", "1. intro.md", "> quote.md", "  spaced   name  "}
	var docs []NamedDoc
	for _, n := range names {
		docs = append(docs, NamedDoc{Name: collapseSpace(n), Data: []byte("text\n")})
	}
	checkCombined(t, docs)
}
