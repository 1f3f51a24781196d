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
		out := string(blankJSXLines([]byte(src)))
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
	f.Add(src)
	f.Add([]byte("<Tabs>\r\n<>\n</>\n  <A b=\">\" />\n<Foo>x</Foo>"))
	f.Fuzz(func(t *testing.T, v []byte) {
		in := string(v)
		out := blankJSXLines(v)
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
		if again := blankJSXLines(out); string(again) != string(out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}
