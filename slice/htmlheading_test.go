package slice

import (
	"strings"
	"testing"
)

// readmeHTML is how READMEs and documents converted from HTML write
// headings: tags with attributes, some inside a centred <div>, some
// followed at once by text (which markdown keeps in the same HTML block).
const readmeHTML = `<div align="center">
<h1 align="center"><img src="logo.svg" width="80"> Widget</h1>
<p>A small tool.</p>
</div>

Widget does one thing.

<h2 id="install" class="title">Install &amp; Setup</h2>
Run the installer.

### From source

Build it.

<H2 ID='usage'>Usage</H2>

Call it.

<h3><a href="#flags">Flags</a></h3>

Flag list.

<pre>
<h2>Not a heading</h2>
</pre>

<!--
<h2>Commented out</h2>
-->

Inline <h2>not alone</h2> on a line.

## Licence

MIT.
`

func TestHTMLHeadings(t *testing.T) {
	d := ParseString(readmeHTML)
	type want struct {
		level     int
		title, id string
		line, end int
	}
	wants := []want{
		{1, "Widget", "", 2, 35},
		{2, "Install & Setup", "install", 8, 14},
		{3, "From source", "", 11, 14},
		{2, "Usage", "usage", 15, 32},
		{3, "Flags", "", 19, 32},
		{2, "Licence", "", 33, 35},
	}
	if len(d.headings) != len(wants) {
		for _, h := range d.headings {
			t.Logf("%d %q line %d", h.Level, h.Title, h.Line)
		}
		t.Fatalf("%d headings, want %d", len(d.headings), len(wants))
	}
	for i, w := range wants {
		h := d.headings[i]
		if h.Level != w.level || h.Title != w.title || h.ID != w.id || h.Line != w.line || h.EndLine != w.end {
			t.Errorf("heading %d: level %d %q id %q lines %d-%d; want level %d %q id %q lines %d-%d",
				i, h.Level, h.Title, h.ID, h.Line, h.EndLine, w.level, w.title, w.id, w.line, w.end)
		}
	}
	for _, ptr := range []string{"Install & Setup", "install", "#install", "Widget > Install & Setup", "## Install & Setup"} {
		r := d.Extract(Pointers{Sections: []string{ptr}})
		if r.Fallback || len(r.Matched) != 1 || r.Matched[0].Heading != "Install & Setup" {
			t.Errorf("%q: fallback %v, matches %+v, warnings %q", ptr, r.Fallback, r.Matched, r.Warnings)
			continue
		}
		if !strings.Contains(r.Text, "Run the installer") || !strings.Contains(r.Text, "Build it") || strings.Contains(r.Text, "Call it") {
			t.Errorf("%q cut %q", ptr, r.Text)
		}
	}
	if r := d.Extract(Pointers{Sections: []string{"usage"}}); r.Fallback || len(r.Matched) != 1 || r.Matched[0].StartLine != 15 {
		t.Errorf("id usage: %+v %q", r.Matched, r.Warnings)
	}
}

func TestParseHTMLHeading(t *testing.T) {
	for _, c := range []struct {
		line      string
		ok        bool
		level     int
		title, id string
	}{
		{`<h2 id="x" class="y">Title</h2>`, true, 2, "Title", "x"},
		{`  <h4 id=plain>A <code>b</code> c</h4>  `, true, 4, "A b c", "plain"},
		{`<h1><img alt="Logo Name" src="l.png"></h1>`, true, 1, "Logo Name", ""},
		{`<h1><img src="l.png"></h1>`, false, 0, "", ""},
		{`<h2>A</h2><h2>B</h2>`, false, 0, "", ""},
		{`<h2>Mismatched</h3>`, false, 0, "", ""},
		{`<h2 data-id="no">Only data</h2>`, true, 2, "Only data", ""},
		{`<header>Not a heading</header>`, false, 0, "", ""},
		{`<h7>No such level</h7>`, false, 0, "", ""},
		{`<h2>A <h3>B</h3></h2>`, false, 0, "", ""},
		{`<h4 align="center">Built on <a href="x">Electron</a>.</h4>`, true, 4, "Built on Electron.", ""},
		{`<h2>Foo<br>Bar</h2>`, true, 2, "Foo Bar", ""},
		{`<h2>Pourquoi ?</h2>`, true, 2, "Pourquoi ?", ""},
	} {
		h, ok := parseHTMLHeading(c.line)
		if ok != c.ok || h.level != c.level || h.title != c.title || h.id != c.id {
			t.Errorf("%q: %+v %v; want level %d %q id %q %v", c.line, h, ok, c.level, c.title, c.id, c.ok)
		}
	}
}

// Combine moves an HTML heading down a level as it does a markdown one, so
// a file's <h1> does not stand beside the files' names.
func TestCombineHTMLHeadings(t *testing.T) {
	checkCombined(t, []NamedDoc{{Name: "README.md", Data: []byte(readmeHTML)}, {Name: "b.md", Data: []byte("<h1>B</h1>\n<h6>Six</h6>\n")}})
	combined, _ := Combine([]NamedDoc{{Name: "a.md", Data: []byte(readmeHTML)}})
	d := Parse(combined)
	if h := d.headings[1]; h.Title != "Widget" || h.Level != 2 {
		t.Errorf("first heading of the file: %+v", h)
	}
	if h := d.headings[2]; h.Title != "Install & Setup" || h.Level != 3 || h.ID != "install" {
		t.Errorf("second heading of the file: %+v", h)
	}
}

// FuzzHTMLHeading: any line reads as no heading or as one of level 1 to 6
// with a title of one line, never a panic.
func FuzzHTMLHeading(f *testing.F) {
	for _, l := range strings.Split(readmeHTML, "\n") {
		f.Add(l)
	}
	f.Add(`<h2 id='a"b' alt=x>T&amp;<i>i</i></h2>`)
	f.Fuzz(func(t *testing.T, line string) {
		h, ok := parseHTMLHeading(line)
		if !ok {
			return
		}
		if h.level < 1 || h.level > 6 || h.title == "" || strings.ContainsAny(h.title, "\r\n") {
			t.Fatalf("%q read as %+v", line, h)
		}
	})
}

// bannerHTML holds heading elements spread over lines, as README banners
// write them, and elements that must stay HTML: one never closed, one
// closed past the bound, one split by a blank line.
const bannerHTML = `<h1 align="center">
  <img src="logo.png" alt="Acme" width="120"><br>
  Acme CLI
</h1>

<p align="center">A tool.</p>

<h2 id="install">
Install
</h2>

Run the installer.

<h2>
  <img src="shot.png" alt="Screen &amp; shot">
</h2>

<h3 id='a'>Split
   &amp; joined</h3>
Text under it.

<h2>
never closed

<h2>
1
2
3
4
5
6
7
</h2>

<h2>
Split by a blank

</h2>

## End

Done.
`

func TestMultiLineHTMLHeadings(t *testing.T) {
	d := ParseString(bannerHTML)
	type want struct {
		level     int
		title, id string
		line, end int
	}
	wants := []want{
		{1, "Acme CLI", "", 1, 42},
		{2, "Install", "install", 8, 13},
		{2, "Screen & shot", "", 14, 39},
		{3, "Split & joined", "a", 18, 39},
		{2, "End", "", 40, 42},
	}
	if len(d.headings) != len(wants) {
		for _, h := range d.headings {
			t.Logf("%d %q line %d", h.Level, h.Title, h.Line)
		}
		t.Fatalf("%d headings, want %d", len(d.headings), len(wants))
	}
	for i, w := range wants {
		h := d.headings[i]
		if h.Level != w.level || h.Title != w.title || h.ID != w.id || h.Line != w.line || h.EndLine != w.end {
			t.Errorf("heading %d: level %d %q id %q lines %d-%d; want level %d %q id %q lines %d-%d",
				i, h.Level, h.Title, h.ID, h.Line, h.EndLine, w.level, w.title, w.id, w.line, w.end)
		}
	}
	r := d.Extract(Pointers{Sections: []string{"install"}})
	if r.Fallback || len(r.Matched) != 1 || !strings.HasPrefix(r.Text, "<h2 id=\"install\">\nInstall\n</h2>") || !strings.Contains(r.Text, "Run the installer") || strings.Contains(r.Text, "shot") {
		t.Errorf("install cut %q (fallback %v, warnings %q)", r.Text, r.Fallback, r.Warnings)
	}
}

// A heading element is looked for over a bounded span: an opening tag with
// no closing tag in sight costs no more than the bound, and an element
// longer than 1 KiB is left as HTML.
func TestMultiLineHTMLHeadingBound(t *testing.T) {
	long := "<h2>\n" + strings.Repeat("word ", 220) + "\n</h2>\n\n## After\n"
	if d := ParseString(long); len(d.headings) != 1 || d.headings[0].Title != "After" {
		t.Errorf("an element over 1 KiB: %+v", d.headings)
	}
	// Only the last opening is closed, and no heading holds another.
	many := strings.Repeat("<h2>\nx\n", 5000) + "</h2>\n"
	d := ParseString(many)
	if len(d.headings) != 1 || d.headings[0].Title != "x" || d.headings[0].Line != 9999 {
		t.Errorf("openings without a near close: %+v", d.headings)
	}
}

// Combine moves a heading element spread over lines down a level in both
// its tags.
func TestCombineMultiLineHTMLHeadings(t *testing.T) {
	checkCombined(t, []NamedDoc{{Name: "README.md", Data: []byte(bannerHTML)}, {Name: "b.md", Data: []byte("<h1>\nB\n</h1>\n")}})
	combined, _ := Combine([]NamedDoc{{Name: "a.md", Data: []byte(bannerHTML)}})
	if !strings.Contains(string(combined), "<h2 align=\"center\">\n") || !strings.Contains(string(combined), "\n</h2>\n\n<p") {
		t.Errorf("combined:\n%s", combined)
	}
	d := Parse(combined)
	if len(d.headings) < 3 {
		t.Fatalf("headings %+v", d.headings)
	}
	if h := d.headings[1]; h.Title != "Acme CLI" || h.Level != 2 {
		t.Errorf("first heading of the file: %+v", h)
	}
	if h := d.headings[2]; h.Title != "Install" || h.Level != 3 || h.ID != "install" {
		t.Errorf("second heading of the file: %+v", h)
	}
}
