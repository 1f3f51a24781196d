package slice

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const vendorsDoc = `# Vendors

## Acme

### Pricing

Acme costs $10.

## Globex

### Pricing

Globex costs $99.

## Notes

first

## Notes

second

### Pricing

in the second notes
`

func TestUniquePaths(t *testing.T) {
	d := Parse([]byte(vendorsDoc))
	var got []string
	for _, h := range d.Outline() {
		got = append(got, h.UniquePath)
	}
	want := []string{
		"Vendors",
		"Vendors > Acme",
		"Vendors > Acme > Pricing",
		"Vendors > Globex",
		"Vendors > Globex > Pricing",
		"Vendors > Notes (1)",
		"Vendors > Notes (2)",
		"Vendors > Notes (2) > Pricing",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unique paths (-want +got):\n%s", diff)
	}
}

// A title that collides with an ordinal another heading was given still
// leaves every path unique.
func TestUniquePathsNeverCollide(t *testing.T) {
	d := Parse([]byte("# Notes\n# Notes (2)\n# Notes\n# A > B\n# A\n## B\n"))
	seen := map[string]bool{}
	for _, h := range d.Outline() {
		if seen[h.UniquePath] {
			t.Errorf("path %q given twice: %+v", h.UniquePath, d.Outline())
		}
		seen[h.UniquePath] = true
	}
}

// A bare title naming several sections is ambiguous: no section is cut for
// it, the candidates are named by their paths, and a path settles it.
func TestDuplicateTitleIsAmbiguous(t *testing.T) {
	d := Parse([]byte(vendorsDoc))
	r := d.Extract(Pointers{Sections: []string{"Pricing"}})
	if len(r.Matched) != 0 || !r.Fallback || !cmp.Equal(r.Unmatched, []string{"Pricing"}) {
		t.Fatalf("matched %+v unmatched %q fallback %v; want the pointer unmatched", r.Matched, r.Unmatched, r.Fallback)
	}
	wantMiss := []Miss{{Pointer: "Pricing", Ambiguous: true, Candidates: []string{
		"Vendors > Acme > Pricing", "Vendors > Globex > Pricing", "Vendors > Notes (2) > Pricing"}}}
	if diff := cmp.Diff(wantMiss, r.Misses); diff != "" {
		t.Errorf("misses (-want +got):\n%s", diff)
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "ambiguous") || !strings.Contains(r.Warnings[0], `"Vendors > Globex > Pricing" (lines 11-14)`) {
		t.Errorf("warnings %q: want one naming the candidates", r.Warnings)
	}

	for ptr, wantLine := range map[string]int{
		"Globex > Pricing":         11,
		"Globex/Pricing":           11,
		"## Globex ### Pricing":    11,
		"Vendors > Acme > Pricing": 5,
		"acme > pricing":           5,
		"Notes (2) > Pricing":      23,
		"Notes (2)":                19,
		"Vendors > Notes (1)":      15,
		"Globex > Pricng":          11, // a typo in the leaf, settled by the parent
		"Notes > Pricing":          23, // only the second Notes has a Pricing
	} {
		r := d.Extract(Pointers{Sections: []string{ptr}})
		if len(r.Matched) != 1 || r.Matched[0].StartLine != wantLine {
			t.Errorf("%q matched %+v (warnings %q), want the section at line %d", ptr, r.Matched, r.Warnings, wantLine)
		}
	}
	// Each vendor's subtask gets its own price.
	r = d.Extract(Pointers{Sections: []string{"Globex > Pricing"}})
	if !strings.Contains(r.Text, "$99") || strings.Contains(r.Text, "$10") {
		t.Errorf("Globex slice %q", r.Text)
	}
	r = d.Extract(Pointers{Sections: []string{"Notes"}})
	if len(r.Matched) != 0 || len(r.Misses) != 1 || !r.Misses[0].Ambiguous {
		t.Errorf("bare Notes: matched %+v misses %+v; want ambiguous", r.Matched, r.Misses)
	}
}

// When one of the sections a pointer names holds all the others, cutting it
// loses nothing; it is used, and the warning says so.
func TestAmbiguityInsideOneSectionUsesIt(t *testing.T) {
	d := Parse([]byte("# Overview\n\ntext\n\n## Overview\n\nmore\n\n# Other\n"))
	r := d.Extract(Pointers{Sections: []string{"Overview"}})
	if len(r.Matched) != 1 || r.Matched[0].StartLine != 1 || r.Matched[0].EndLine != 8 {
		t.Fatalf("matched %+v, want the outer Overview", r.Matched)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "holds") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// Every pointer that selects nothing is a warning, with the nearest headings
// as suggestions, even when its siblings match.
func TestUnmatchedPointerIsWarned(t *testing.T) {
	d := Parse([]byte(vendorsDoc))
	r := d.Extract(Pointers{Sections: []string{"Globex > Pricing", "Globex Shipping"}, LineRanges: [][2]int{{900, 950}}})
	if len(r.Matched) != 1 || r.Fallback {
		t.Fatalf("matched %+v fallback %v", r.Matched, r.Fallback)
	}
	if !cmp.Equal(r.Unmatched, []string{"Globex Shipping", "lines 900-950"}) {
		t.Errorf("unmatched %q", r.Unmatched)
	}
	if len(r.Warnings) != 2 {
		t.Fatalf("warnings %q, want one per unmatched pointer", r.Warnings)
	}
	if w := r.Warnings[0]; !strings.Contains(w, `section "Globex Shipping" matched nothing`) || !strings.Contains(w, "nearest:") {
		t.Errorf("warning %q: want the pointer and the nearest headings", w)
	}
	if w := r.Warnings[1]; !strings.Contains(w, "lines 900-950 matched nothing") || !strings.Contains(w, "1-25") {
		t.Errorf("warning %q: want the range and the document's lines", w)
	}
	if len(r.Misses) != 2 || r.Misses[0].Pointer != "Globex Shipping" || len(r.Misses[0].Candidates) == 0 || r.Misses[0].Ambiguous {
		t.Errorf("misses %+v", r.Misses)
	}
}

func TestNearestHeadings(t *testing.T) {
	d := Parse([]byte(vendorsDoc))
	r := d.Extract(Pointers{Sections: []string{"Globex Pricing Tiers"}})
	if len(r.Misses) != 1 || len(r.Misses[0].Candidates) == 0 || r.Misses[0].Candidates[0] != "Vendors > Globex > Pricing" {
		t.Errorf("misses %+v, want the Globex pricing first", r.Misses)
	}
}

// A word of the numbering's label counts as shared: "Appendix C" suggests
// the appendices, not the section whose title is nearest in letters.
func TestNearestHeadingsShareLabels(t *testing.T) {
	d := loadDoc(t, "report.md")
	r := d.Extract(Pointers{Sections: []string{"Appendix C"}})
	want := []string{"Quarterly Operations Report — Q3 > Appendix A: Glossary", "Quarterly Operations Report — Q3 > Appendix B: Raw Numbers"}
	if len(r.Misses) != 1 || !cmp.Equal(r.Misses[0].Candidates, want) {
		t.Errorf("misses %+v, want the candidates %q", r.Misses, want)
	}
}
