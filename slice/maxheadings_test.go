package slice

import (
	"fmt"
	"strings"
	"testing"
)

// TestHeadingsPastMax: past MaxHeadings, headings are read as text, the
// last section taken runs to the end, and the cut is counted.
func TestHeadingsPastMax(t *testing.T) {
	var b strings.Builder
	for i := range MaxHeadings + 5 {
		fmt.Fprintf(&b, "# H%d\n", i)
	}
	d := ParseString(b.String())
	hs := d.Outline()
	if len(hs) != MaxHeadings || d.HeadingsCut() != 5 {
		t.Fatalf("%d headings taken, %d cut; want %d and 5", len(hs), d.HeadingsCut(), MaxHeadings)
	}
	last := hs[len(hs)-1]
	if last.Title != fmt.Sprintf("H%d", MaxHeadings-1) || last.EndLine != d.NumLines() {
		t.Errorf("last section %q runs to line %d; want H%d to the last line, %d", last.Title, last.EndLine, MaxHeadings-1, d.NumLines())
	}
	if d := ParseString("# a\n\n## b\n"); d.HeadingsCut() != 0 {
		t.Errorf("a small document has %d headings cut", d.HeadingsCut())
	}
}
