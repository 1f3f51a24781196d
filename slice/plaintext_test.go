package slice

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const plainReport = `ANNUAL REPORT 2024

Acme had a good year.

1. Overview

The company grew.

1.1 Markets

Europe and Asia.

2. Revenue

Revenue rose 12%.

Things to do:

1. Buy milk
2. Get eggs

Section 3: Risks

Gateway dependency.

` + "```" + `
4. Not a heading

CODE BLOCK
` + "```" + `
`

func TestPlainTextHeadings(t *testing.T) {
	d := ParseString(plainReport)
	type h struct {
		Level       int
		Title, Path string
		Line, End   int
	}
	var got []h
	for _, x := range d.Outline() {
		got = append(got, h{x.Level, x.Title, x.UniquePath, x.Line, x.EndLine})
	}
	want := []h{
		{1, "ANNUAL REPORT 2024", "ANNUAL REPORT 2024", 1, 4},
		{1, "1. Overview", "1. Overview", 5, 12},
		{2, "1.1 Markets", "1. Overview > 1.1 Markets", 9, 12},
		{1, "2. Revenue", "2. Revenue", 13, 21},
		{1, "Section 3: Risks", "Section 3: Risks", 22, 30},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("plain headings (-want +got):\n%s", diff)
	}
	r := d.Extract(Pointers{Sections: []string{"Revenue", "Section 3"}})
	if r.Fallback || !strings.Contains(r.Text, "Revenue rose") || !strings.Contains(r.Text, "Gateway") || strings.Contains(r.Text, "Europe") {
		t.Fatalf("sections of a plain-text report: %+v", r)
	}
	// Combining files leaves a plain-text file's lines as they are.
	combined, _ := Combine([]NamedDoc{{Name: "a.txt", Data: []byte(plainReport)}, {Name: "b.md", Data: []byte("# B\n")}})
	if !strings.Contains(string(combined), "\n1. Overview\n") {
		t.Errorf("combine changed a plain-text heading:\n%s", combined)
	}
}

// Ordinary prose makes no heading: a lone line in capitals, a short line
// that is a sentence, a numbered list, a quote.
func TestPlainTextHeadingsNotInProse(t *testing.T) {
	for _, text := range []string{
		"Dear team,\n\nWARNING\n\nThe build is red.\n",
		"Notes.\n\nWe met on Monday.\n\nIt rained.\n\nOK.\n\nFINE.\n",
		"Steps:\n\n1. Open the box\n\n2. Take the lid off\n\n3. Enjoy\n",
		"> NOTE WELL\n\ntext\n\n> ANOTHER ONE\n",
		"one line with no break at all and a Title. More words follow here.",
	} {
		if hs := ParseString(text).Outline(); len(hs) != 0 {
			t.Errorf("headings in prose %q: %+v", text, hs)
		}
	}
}

// The bench corpus's markdown documents keep exactly their markdown
// headings, and with those headings taken out, their prose, lists, tables
// and code make no plain-text heading either.
func TestPlainTextHeadingsNeverInTheCorpus(t *testing.T) {
	files, err := filepath.Glob("../internal/bench/testdata/corpus/*.md")
	if err != nil || len(files) < 5 {
		t.Fatalf("corpus: %v, %d files", err, len(files))
	}
	files = append(files, "../examples/incident-report.md", "../examples/design-spec.md")
	strip := regexp.MustCompile(`(?m)^ {0,3}#{1,6}(?:[ \t].*)?$|^[=-]{3,}[ \t]*$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := Parse(b)
		for _, h := range d.headings {
			if h.plain {
				t.Errorf("%s: plain heading %q in a markdown document", f, h.Title)
			}
		}
		if hs := Parse(strip.ReplaceAll(b, nil)).Outline(); len(hs) != 0 {
			t.Errorf("%s without its headings: %d plain headings, first %q", filepath.Base(f), len(hs), hs[0].Title)
		}
	}
}
