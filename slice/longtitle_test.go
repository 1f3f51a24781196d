package slice

import (
	"strings"
	"testing"
)

// TestLongTitleTakenAsWritten: a heading of unclosed emphasis and brackets
// far longer than any title is not parsed inline (whose work grows faster
// than the text): its title is its text as written. A heading just under
// the bound still has its markup reduced.
func TestLongTitleTakenAsWritten(t *testing.T) {
	long := strings.Repeat("*a _b [c ", 20_000) + "**x**"
	d := ParseString("# " + long + "\n\ntext\n")
	if got := d.Outline(); len(got) != 1 || got[0].Title != long {
		t.Fatalf("long heading: want its text as written (%d bytes), got %d headings", len(long), len(got))
	}
	// Under both bounds: under MaxInlineTitle bytes, with less markup than
	// MaxTitleMarkup.
	words := strings.Repeat("word ", (MaxInlineTitle-200)/5)
	short := words + strings.Repeat("**bold** ", MaxTitleMarkup/4)
	d = ParseString("# " + short + "\n")
	want := strings.TrimSpace(words + strings.Repeat("bold ", MaxTitleMarkup/4))
	if got := d.Outline(); len(got) != 1 || got[0].Title != want {
		t.Errorf("heading under the bound: want its markup reduced, got %q...", got[0].Title[:40])
	}
}
