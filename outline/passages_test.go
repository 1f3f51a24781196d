package outline

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// largeSectionDoc has one section whose own text is n paragraphs of about
// 600 bytes, between two small ones.
func largeSectionDoc(n int) string {
	var b strings.Builder
	b.WriteString("# Report\n\nA short introduction.\n\n## Findings\n\n")
	for i := range n {
		fmt.Fprintf(&b, "Finding %d concerns site %d. %s\n\n", i+1, i+1, strings.Repeat("The measurements were taken twice and agree within the stated margin. ", 8))
	}
	b.WriteString("### Method\n\nWe sampled the sites.\n\n## Summary\n\nAll good.\n")
	return b.String()
}

var passageLineRE = regexp.MustCompile(`(?m)^  (p\d+(?:-p\d+)?) \[lines? \d+(?:-\d+)?, \d+ tokens\]: Finding \d+`)

// A section whose own text is over slice.LargeSectionBytes lists its
// passages under its line, ids a slice pointer resolves to text inside that
// section; small sections list none.
func TestLargeSectionPassages(t *testing.T) {
	src := largeSectionDoc(60) // 36 kB of own text
	d := slice.ParseString(src)
	o, err := Build([]Source{{Name: "r.md", Doc: d}}, tokens.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var findings Entry
	for _, e := range o.Entries {
		if e.Title == "Findings" {
			findings = e
		} else if len(e.Passages) > 0 {
			t.Errorf("%q lists passages %+v", e.Path, e.Passages)
		}
	}
	if len(findings.Passages) < 10 || len(findings.Passages) > maxSectionPassages {
		t.Fatalf("Findings lists %d passages, want 10 to %d", len(findings.Passages), maxSectionPassages)
	}
	text := o.Text()
	got := passageLineRE.FindAllStringSubmatch(text, -1)
	if len(got) != len(findings.Passages) || !strings.Contains(text, "point into it with passage ids") {
		t.Fatalf("outline shows %d passage lines, want %d:\n%s", len(got), len(findings.Passages), text)
	}
	// The listed passages tile the section's own text and resolve there.
	total := 0
	for i, m := range got {
		r := d.Extract(slice.Pointers{Passages: []string{m[1]}})
		if r.Fallback || len(r.Matched) != 1 {
			t.Fatalf("%s: %+v %q", m[1], r.Matched, r.Warnings)
		}
		mt := r.Matched[0]
		if mt.StartLine < findings.Line || mt.EndLine >= strings.Count(src[:strings.Index(src, "### Method")], "\n")+1 {
			t.Errorf("%s cuts lines %d-%d, outside Findings' own text", m[1], mt.StartLine, mt.EndLine)
		}
		if i == 0 && mt.StartLine != findings.Line {
			t.Errorf("first passage starts at line %d, the section at %d", mt.StartLine, findings.Line)
		}
		total += len(r.Text)
	}
	if own := strings.Index(src, "### Method") - strings.Index(src, "## Findings"); total < own-len(got) {
		t.Errorf("the passages cover %d bytes of the section's %d", total, own)
	}
	// A budget that leaves no room for leads leaves no passage lines.
	bare := *o
	bare.choose(o.MaxDepth, false)
	if strings.Contains(bare.Text(), "  p") {
		t.Errorf("passages shown without leads:\n%s", bare.Text())
	}
}

// Past maxSectionPassages the passages are listed in runs, still covering
// the whole section in order.
func TestLargeSectionPassageRuns(t *testing.T) {
	d := slice.ParseString(largeSectionDoc(200)) // about 60 passages
	o, err := Build([]Source{{Name: "r.md", Doc: d}}, tokens.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := o.Lookup("Report > Findings")
	if !ok {
		t.Fatal("no Findings")
	}
	all := d.PassagesWithin(e.Line, e.EndLine)
	if len(e.Passages) != maxSectionPassages || e.Passages[0].ID[:len(all[0].ID)+1] != all[0].ID+"-" {
		t.Fatalf("%d runs, first %q", len(e.Passages), e.Passages[0].ID)
	}
	next := all[0].ID
	for _, p := range e.Passages {
		first, last, _ := strings.Cut(p.ID, "-")
		if first != next {
			t.Fatalf("run %q does not follow on from %q", p.ID, next)
		}
		if last == "" {
			last = first
		}
		var n int
		fmt.Sscanf(last, "p%d", &n)
		next = slice.PassageID(n + 1)
	}
	if r := d.Extract(slice.Pointers{Passages: []string{next}}); !strings.HasPrefix(r.Text, "### Method") {
		t.Errorf("the passage after the last run is not the subsection: %q", r.Text[:min(40, len(r.Text))])
	}
}
