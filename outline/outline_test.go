package outline

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	golden_ "github.com/baton-dev/baton/internal/golden"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
	"github.com/google/go-cmp/cmp"
)

// byteCounter counts bytes as tokens and remembers how much it was asked to
// count, so sizes can be checked exactly against the text they cover.
type byteCounter struct {
	calls, bytes int
}

func (c *byteCounter) Count(s string) int {
	c.calls++
	c.bytes += len(s)
	return len(s)
}

func build(t *testing.T, src string, c Counter, budget int) *Outline {
	t.Helper()
	o, err := Build([]Source{{Name: "r.md", Doc: slice.Parse([]byte(src))}}, c, budget)
	if err != nil {
		t.Fatalf("Build(budget %d): %v", budget, err)
	}
	return o
}

// lines returns lines from..to of src (1-based, inclusive) with their
// terminators: the text a section covers.
func lines(src string, from, to int) string {
	ls := strings.SplitAfter(src, "\n")
	return strings.Join(ls[from-1:to], "")
}

const sample = `Preamble before any heading.

# Globex

Globex is a **company** that sells [widgets](https://example.com). It was founded in 1990.

## Pricing

- Prices are set *yearly* by the board.

### Discounts

Volume discounts start at 100 units.

## Notes

First note.

## Notes

Second note.

## Notes (2)

A heading that really is spelled this way.

Setext title
------------

Body of the setext section.

# Initech

` + "```" + `
code is not a lead
` + "```" + `

Initech makes TPS reports.
`

func TestBuildEntries(t *testing.T) {
	c := &byteCounter{}
	o := build(t, sample, c, 0)
	type row struct {
		Path             string
		Depth, Line, End int
		Lead             string
	}
	var got []row
	for _, e := range o.Entries {
		got = append(got, row{e.Path, e.Depth, e.Line, e.EndLine, e.Lead})
	}
	want := []row{
		{"Globex", 1, 3, 31, "Globex is a company that sells widgets."},
		{"Globex > Pricing", 2, 7, 14, "Prices are set yearly by the board."},
		{"Globex > Pricing > Discounts", 3, 11, 14, "Volume discounts start at 100 units."},
		{"Globex > Notes", 2, 15, 18, "First note."},
		{"Globex > Notes (2)", 2, 19, 22, "Second note."},
		// A real "Notes (2)" keeps its title; the ordinal is only taken
		// when free, so the later duplicate would move on, not collide.
		{"Globex > Notes (2) (2)", 2, 23, 26, "A heading that really is spelled this way."},
		{"Globex > Setext title", 2, 27, 31, "Body of the setext section."},
		{"Initech", 1, 32, 38, "Initech makes TPS reports."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// With bytes as tokens, a section's size is exactly the bytes of its
	// lines: own text plus subsections, each counted once.
	for _, e := range o.Entries {
		if w := len(lines(sample, e.Line, e.EndLine)); e.Tokens != w {
			t.Errorf("%s: Tokens = %d, want %d (the bytes of lines %d-%d)", e.Path, e.Tokens, w, e.Line, e.EndLine)
		}
	}
	d := o.Documents[0]
	if d.Tokens != len(sample) || d.Lines != 38 || d.Preamble != 2 || d.Headings != 8 {
		t.Errorf("document info = %+v, want tokens %d, 38 lines, preamble to line 2, 8 headings", d, len(sample))
	}
}

func TestDuplicateOrdinal(t *testing.T) {
	// The ordinal counts within a parent: "Notes" under two parents is
	// two different paths and needs none.
	src := "# A\n## Notes\n## Notes\n## Notes\n# B\n## Notes\n"
	o := build(t, src, &byteCounter{}, 0)
	var got []string
	for _, e := range o.Entries {
		got = append(got, e.Path)
	}
	want := []string{"A", "A > Notes", "A > Notes (2)", "A > Notes (3)", "B", "B > Notes"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	o := build(t, sample, &byteCounter{}, 0)
	for _, e := range o.Entries {
		got, ok := o.Lookup(o.Pointer(e))
		if !ok || got.Line != e.Line || got.EndLine != e.EndLine {
			t.Errorf("Lookup(%q) = %+v, %v; want lines %d-%d", o.Pointer(e), got, ok, e.Line, e.EndLine)
		}
	}
	if e, ok := o.Lookup("  Globex>Pricing >  Discounts "); !ok || e.Line != 11 {
		t.Errorf("Lookup with loose spacing = %+v, %v; want the Discounts section", e, ok)
	}
	for _, p := range []string{"Pricing", "Globex > Nope", ""} {
		if e, ok := o.Lookup(p); ok {
			t.Errorf("Lookup(%q) = %+v; want no match (only full paths name a section)", p, e)
		}
	}
	// A collapsed heading is still found: the planner may know its path
	// from an earlier, fuller outline.
	small := build(t, sample, &byteCounter{}, sizeAt(t, sample, 1, true))
	if _, ok := small.Lookup("Globex > Pricing > Discounts"); !ok {
		t.Error("Lookup of a collapsed heading failed")
	}
}

func TestMultipleDocuments(t *testing.T) {
	docs := []Source{
		{Name: "a.md", Doc: slice.Parse([]byte("# Pricing\nA's prices.\n"))},
		{Name: "b.md", Doc: slice.Parse([]byte("# Pricing\nB's prices.\n"))},
	}
	o, err := Build(docs, &byteCounter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	txt := o.Text()
	for _, w := range []string{`Document "a.md"`, `Document "b.md"`, "a.md > Pricing [lines 1-2", "b.md > Pricing [lines 1-2"} {
		if !strings.Contains(txt, w) {
			t.Errorf("outline lacks %q:\n%s", w, txt)
		}
	}
	if e, ok := o.Lookup("b.md > Pricing"); !ok || e.Document != "b.md" {
		t.Errorf("Lookup(b.md > Pricing) = %+v, %v", e, ok)
	}
	if _, err := Build([]Source{docs[0], docs[0]}, &byteCounter{}, 0); err == nil || !strings.Contains(err.Error(), `two documents are named "a.md"`) {
		t.Errorf("Build with a repeated name: err = %v", err)
	}
}

func TestNoHeadingsAndMissing(t *testing.T) {
	o := build(t, "just\ntext\n", &byteCounter{}, 0)
	if len(o.Entries) != 0 || !strings.Contains(o.Text(), "point into it with passages") || !strings.Contains(o.Text(), "\np1 [lines 1-2, 10 tokens]: just text\n") || o.Documents[0].Tokens != 10 {
		t.Errorf("outline of a document with no headings:\n%s%+v", o.Text(), o.Documents)
	}
	if _, err := Build([]Source{{Name: "x.md"}}, &byteCounter{}, 0); err == nil || !strings.Contains(err.Error(), `"x.md"`) {
		t.Errorf("Build with a nil document: err = %v, want one naming it", err)
	}
}

func TestJSON(t *testing.T) {
	o := build(t, sample, tokens.Default(), 0)
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Documents []DocumentInfo `json:"documents"`
		Entries   []Entry        `json:"entries"`
		Depth     int            `json:"depth"`
		MaxDepth  int            `json:"max_depth"`
		Leads     bool           `json:"leads"`
		Tokens    int            `json:"tokens"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o.Entries, back.Entries, cmp.AllowUnexported(Entry{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".subtree"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("entries after a JSON round trip (-want +got):\n%s", diff)
	}
	if back.Depth != 3 || back.MaxDepth != 3 || !back.Leads || back.Tokens != o.Tokens || back.Tokens == 0 {
		t.Errorf("JSON header = depth %d/%d leads %v tokens %d; want 3/3 true %d", back.Depth, back.MaxDepth, back.Leads, back.Tokens, o.Tokens)
	}
	// An outline with no headings still has a list, not null.
	e := build(t, "text\n", tokens.Default(), 0)
	if b, _ := json.Marshal(e); !strings.Contains(string(b), `"entries":[]`) {
		t.Errorf("JSON of an outline with no entries: %s", b)
	}
}

func TestLead(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, tc := range []struct{ name, body, want string }{
		{"first sentence", "# H\nOne two three. Four five.\n", "One two three."},
		{"short sentence runs on", "# H\nYes. It is the case.\n", "Yes. It is the case."},
		{"word limit", "# H\n" + long, strings.TrimSpace(strings.Repeat("word ", 25)) + "…"},
		{"markup", "# H\n> **Bold** and `code` with ![alt](i.png) and <b>tag</b> end.\n", "Bold and code with alt and tag end."},
		{"list and task", "# H\n- [x] done item here.\n", "done item here."},
		{"numbered", "# H\n1. Step one is this.\n", "Step one is this."},
		{"code skipped", "# H\n```go\nx := 1.\n```\nAfter code here.\n", "After code here."},
		{"table", "# H\n| Plan | Price |\n|---|---|\n| Pro | $9 |\n", "Plan Price Pro $9"},
		{"reference definition", "# H\n[x]: https://example.com\nText after it.\n", "Text after it."},
		{"setext underline", "Title\n=====\nBody text here.\n", "Body text here."},
		{"empty", "# H\n\n", ""},
		{"escapes", "# H\n(\\*openai.Model, error) and \\_x\\_ stay.\n", "(*openai.Model, error) and _x_ stay."},
		{"tag cut off", "# H\nSee <a href=\"http://example.com/a-very-long", "See"},
		{"long word", "# H\n" + strings.Repeat("x", 500), strings.Repeat("x", 200) + "…"},
		{"utf8 cut", "# H\n" + strings.Repeat("é", 150), strings.Repeat("é", 100) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lead(tc.body); got != tc.want {
				t.Errorf("lead(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

var _ Counter = (*tokens.Counter)(nil)

// TestTextGolden shows the rendered outline in full and collapsed, so a
// change to what the planner reads shows up in review as a diff.
func TestTextGolden(t *testing.T) {
	full := build(t, sample, &byteCounter{}, 0)
	small := build(t, sample, &byteCounter{}, sizeAt(t, sample, 1, true))
	bare := build(t, sample, &byteCounter{}, sizeAt(t, sample, 1, false))
	got := full.Text() + "\n----\n" + small.Text() + "\n----\n" + bare.Text()
	golden_.Check(t, filepath.Join("testdata", "outline.golden"), got)
}
