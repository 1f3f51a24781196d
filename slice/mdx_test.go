package slice

import (
	"os"
	"strings"
	"testing"
)

// An MDX page without front matter: import and export lines, then
// components on lines of their own right before or after markdown headings,
// which CommonMark would read as HTML blocks swallowing those headings.
func TestMDXHeadings(t *testing.T) {
	src, err := os.ReadFile("testdata/mdx.mdx")
	if err != nil {
		t.Fatal(err)
	}
	d := Parse(src)
	var got []string
	for _, h := range d.headings {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Title)
	}
	want := []string{
		"# Installing the agent",
		"## Prerequisites",
		"### Linux packages",
		"### Homebrew",
		"## Configuration",
		"### Environment variables",
		"## Troubleshooting",
		"### Logs",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("headings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := d.Extract(Pointers{Sections: []string{"Homebrew"}})
	if r.Fallback || !strings.Contains(r.Text, "brew install agent") || strings.Contains(r.Text, "Configuration") || strings.Contains(r.Text, "apt-get") {
		t.Errorf("Homebrew cut %q (fallback %v)", r.Text, r.Fallback)
	}
	// The component lines stay in the text a section hands on.
	r = d.Extract(Pointers{Sections: []string{"Configuration"}})
	if !strings.Contains(r.Text, "<Note>") || !strings.Contains(r.Text, "<Step title=") {
		t.Errorf("Configuration cut %q", r.Text)
	}
}

func TestBlankJSXLines(t *testing.T) {
	for _, c := range []struct {
		line  string
		blank bool
	}{
		{"<Tabs>", true},
		{"</TabItem>", true},
		{`  <TabItem value="linux" label="Linux">`, true},
		{`<Step title="a > b" />`, true},
		{"<>", true},
		{"</>", true},
		{"<Note>Inline text</Note>", false},
		{"<div>", false},
		{"<h2>Title</h2>", false},
		{"<Tabs", false},
		{"text <Tabs>", false},
		{"<Tabs>x", false},
		{"<T-x>", false},
	} {
		src := "a\n" + c.line + "\r\nb"
		out := string(blankJSXLines([]byte(src), false, nil))
		want := src
		if c.blank {
			want = "a\n" + strings.Repeat(" ", len(c.line)) + "\r\nb"
		}
		if out != want {
			t.Errorf("%q became %q, want %q", c.line, out, want)
		}
	}
}

// FuzzBlankJSXLines: the view keeps every line break and the length, blanks
// only whole lines, and blanking again changes nothing.
func FuzzBlankJSXLines(f *testing.F) {
	src, err := os.ReadFile("testdata/mdx.mdx")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(src, true)
	f.Add([]byte(mdxHTML), true)
	f.Add([]byte("<Tabs>\r\n<>\n</>\n  <A b=\">\" />\n<Foo>x</Foo>"), false)
	f.Add([]byte("<h1>\n<Logo />\n<div>\n</h1>\n<div>x</div>\n"), true)
	f.Add([]byte("<Tabs>\nimport X from 'x'\n<div>\n# a.md\n<Tabs>\nexport const a = 1\n<div>\n"), false)
	f.Fuzz(func(t *testing.T, v []byte, mdx bool) {
		in := string(v)
		out := blankJSXLines(v, mdx, mdxParts(v))
		if string(v) != in {
			t.Fatal("the input was changed")
		}
		if len(out) != len(v) {
			t.Fatalf("length %d, want %d", len(out), len(v))
		}
		for i := range v {
			if out[i] != v[i] && (out[i] != ' ' || v[i] == '\n' || v[i] == '\r') {
				t.Fatalf("byte %d: %q became %q", i, v[i], out[i])
			}
		}
		if again := blankJSXLines(out, mdx, mdxParts(out)); string(again) != string(out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}

// mdxHTML is an MDX page that writes lower-case HTML on lines of their own,
// as MDX allows: MDX reads each as a JSX element and the lines between as
// markdown, where CommonMark would open an HTML block swallowing headings.
const mdxHTML = `---
title: Setup
---
import Admonition from '@theme/Admonition';

# Setup

<div align="center">
  <img src="/img/logo.png" alt="Logo" />
</div>
## Requirements

Node 18.

<details>
<summary>Older versions</summary>
### Node 16
Works with a flag.
</details>
## Install
<p align="center"><img src="/img/install.png" /></p>
### From npm
<h2 id="build">
  <img src="/img/build.png" />
  Build
</h2>
Run the build.
<pre>
# not a heading
</pre>

## End
`

func TestMDXLowerCaseHTML(t *testing.T) {
	titles := func(d *Document) string {
		var got []string
		for _, h := range d.headings {
			got = append(got, strings.Repeat("#", h.Level)+" "+h.Title)
		}
		return strings.Join(got, ", ")
	}
	d := ParseString(mdxHTML)
	want := "# Setup, ## Requirements, ### Node 16, ## Install, ### From npm, ## Build, ## End"
	if got := titles(d); got != want {
		t.Fatalf("MDX headings: %s\nwant: %s", got, want)
	}
	r := d.Extract(Pointers{Sections: []string{"Requirements"}})
	if r.Fallback || !strings.Contains(r.Text, "<summary>Older versions</summary>") || strings.Contains(r.Text, "## Install") {
		t.Errorf("Requirements cut %q (fallback %v)", r.Text, r.Fallback)
	}
	// Without its import line the page is markdown, and CommonMark's HTML
	// blocks hide the headings that follow <div> and <details> at once.
	md := strings.Replace(mdxHTML, "import Admonition from '@theme/Admonition';\n", "\n", 1)
	if got, want := titles(ParseString(md)), "# Setup, ## Build, ## End"; got != want {
		t.Errorf("markdown headings: %s\nwant: %s", got, want)
	}
}

func TestIsMDX(t *testing.T) {
	for _, c := range []struct {
		src string
		mdx bool
	}{
		{"import Tabs from '@theme/Tabs';\n# A", true},
		{"import {Note} from \"./note\"\n", true},
		{"import './style.css'\n", true},
		{"export const meta = {title: 'a'}\n", true},
		{"export default function Layout() {}\n", true},
		{"---\ntitle: x\n---\n\n\nimport X from 'x'\n", true},
		{"\r\n  import X from 'x'\r\n", true},
		{"Import the data first.\n", false},
		{"import the data from the old system\n", false},
		{"import X, { Y } from \"x\"\n", true},
		{"export { a } from \"./a\"\n", true},
		{"import the data first\n", false},
		{"export your files\n", false},
		{"# Title\nimport X from 'x'\n", false},
		{"<div>\nimport X from 'x'\n", false},
		{"<Tabs>\n\nimport X from 'x'\n", true},
		{"", false},
	} {
		if got := isMDX([]byte(c.src)); got != c.mdx {
			t.Errorf("%q: MDX %v, want %v", c.src, got, c.mdx)
		}
	}
}

func TestBlankHTMLLinesInMDX(t *testing.T) {
	for _, c := range []struct {
		line  string
		blank bool
	}{
		{"<div>", true},
		{`<div align="center">`, true},
		{"</details>", true},
		{"<summary>Older versions</summary>", true},
		{`<p align="center"><img src="a.png" alt="x > y" /></p>`, true},
		{"<br />", true},
		{"<Note>Inline text</Note>", true},
		{"<h2>Title</h2>", false},
		{`<h2 id="a">`, false},
		{"<div><h3>Inside</h3></div>", false},
		{"<pre>", false},
		{"<script>", false},
		{"<!-- a comment -->", false},
		{`<a href="x">link</a> and text`, false},
		{"text <b>bold</b>", false},
		{"<div", false},
		{"<b>a</b> <i>b</i>", false},
	} {
		src := "a\n" + c.line + "\r\nb"
		out := string(blankJSXLines([]byte(src), true, nil))
		want := src
		if c.blank {
			want = "a\n" + strings.Repeat(" ", len(c.line)) + "\r\nb"
		}
		if out != want {
			t.Errorf("%q became %q, want %q", c.line, out, want)
		}
		if c.blank && !strings.HasPrefix(c.line, "<Note") && string(blankJSXLines([]byte(src), false, nil)) != src {
			t.Errorf("%q blanked outside MDX", c.line)
		}
	}
}

// A line inside a heading element spread over lines stays, so the element
// is read whole, in MDX and in markdown.
func TestBlankLinesKeepHeadingElements(t *testing.T) {
	for _, src := range []string{
		"<h1 align=\"center\">\n<Logo />\nAcme\n</h1>\n\n## Next\n",
		"import X from 'x'\n\n<h1 align=\"center\">\n<img src=\"l.png\" />\n<br />\nAcme\n</h1>\n\n## Next\n",
	} {
		d := ParseString(src)
		if len(d.headings) != 2 || d.headings[0].Title != "Acme" || d.headings[0].Level != 1 {
			t.Errorf("%q: headings %+v", src, d.headings)
		}
	}
}

// Several files joined by Combine: the .mdx file's part is read as MDX by
// its name, though it has no import line, and the markdown file's part
// keeps CommonMark's reading; the MDX headings move down a level with the
// rest.
func TestCombineMDXByName(t *testing.T) {
	page := strings.Replace(mdxHTML, "import Admonition from '@theme/Admonition';\n", "\n", 1)
	docs := []NamedDoc{
		{Name: "docs/_guide_.mdx", Data: []byte(page)},
		{Name: "notes.md", Data: []byte("<div>\n## Hidden\n</div>\n\n## Shown\n")},
		{Name: "more.MDX", Data: []byte("<details>\n## Folded\n</details>\n")},
	}
	checkCombined(t, docs)
	combined, _ := Combine(docs)
	var got []string
	for _, h := range Parse(combined).headings {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Title)
	}
	want := "# docs/_guide_.mdx, ## Setup, ### Requirements, #### Node 16, ### Install, #### From npm, ### Build, ### End, # notes.md, ### Shown, # more.MDX, ### Folded"
	if strings.Join(got, ", ") != want {
		t.Errorf("headings: %s\nwant: %s\nin:\n%s", strings.Join(got, ", "), want, combined)
	}
	if got := isMDXName("a/b.Mdx"); !got {
		t.Error("a/b.Mdx is not MDX")
	}
}

// A part of a combined document parsed alone by its name (as the outline
// planner outlines each document) has the headings it has in the whole: an
// .mdx part by its name, a markdown part with an import at its top by that.
func TestParseNamedPartsReadAsInTheWhole(t *testing.T) {
	page := strings.Replace(mdxHTML, "import Admonition from '@theme/Admonition';\n", "\n", 1)
	docs := []NamedDoc{
		{Name: "guide.mdx", Data: []byte(page)},
		{Name: "esm.md", Data: []byte("import X from 'x'\n\n<div>\n## Shown in MDX\n</div>\n")},
		{Name: "plain.md", Data: []byte("<div>\n## Hidden\n</div>\n\n## Shown\n")},
	}
	checkCombined(t, docs)
	combined, parts := Combine(docs)
	whole := Parse(combined)
	lines := strings.SplitAfter(string(combined), "\n")
	for _, p := range parts {
		var inWhole []string
		for _, h := range whole.headings {
			if h.Line > p.StartLine && h.Line <= p.EndLine {
				inWhole = append(inWhole, h.Title)
			}
		}
		var alone []string
		for _, h := range ParseNamed(p.Name, strings.Join(lines[p.StartLine:p.EndLine], "")).headings {
			alone = append(alone, h.Title)
		}
		if strings.Join(alone, ", ") != strings.Join(inWhole, ", ") || len(alone) == 0 {
			t.Errorf("%s: alone %q, in the whole %q", p.Name, alone, inWhole)
		}
	}
	if d := ParseNamed("plain.md", string(docs[2].Data)); len(d.headings) != 1 {
		t.Errorf("plain.md: %+v", d.headings)
	}
	if d := ParseNamed("page.mdx", page); len(d.headings) != 7 {
		t.Errorf("page.mdx: %d headings", len(d.headings))
	}
}
