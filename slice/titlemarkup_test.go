package slice

import (
	"strings"
	"testing"
)

// TestTitleMarkupBounded: a heading under MaxInlineTitle but made of
// nested brackets (or other markup) is not parsed inline, whose link
// parser rescans the title for every bracket: 2,600 such headings took 30 s.
// The work is measured as allocations, which the inline parse makes for
// every bracket it tries. A heading with the markup of a real title is
// still reduced.
func TestTitleMarkupBounded(t *testing.T) {
	for _, title := range []string{
		strings.Repeat("[", 1900) + "x" + strings.Repeat("]", 1900),
		strings.Repeat("<a ", 1300),
		strings.Repeat("*a _b ", 650),
	} {
		src := "# " + title + "\n"
		allocs := testing.AllocsPerRun(3, func() { ParseString(src) })
		if allocs > 200 {
			t.Errorf("a heading of %d bytes (%.12q...) took %.0f allocations to parse; want at most 200", len(title), title, allocs)
		}
		if got := ParseString(src).Outline(); len(got) != 1 || got[0].Title != collapseSpace(title) {
			t.Errorf("a heading of %d bytes (%.12q...): want its text as written", len(title), title)
		}
	}
	d := ParseString("# Using `foo_bar` with **bold**, _it_ and [a link](http://x.y) <kbd>k</kbd>\n")
	if got := d.Outline(); len(got) != 1 || got[0].Title != "Using foo_bar with bold, it and a link k" {
		t.Errorf("a real title: got %q", got[0].Title)
	}
}
