package plan

import (
	"strings"
	"testing"
)

// A title that repeats in the outline is shown with its unique path, which
// the planner is told to cite; a title that does not repeat costs no extra
// tokens.
func TestOutlineShowsPathsOfRepeatedTitles(t *testing.T) {
	got := plannerUser(PromptInput{Task: "t", Context: "x\n", Outline: []OutlineEntry{
		{Level: 1, Title: "Vendors", Line: 1, EndLine: 9, Path: "Vendors"},
		{Level: 2, Title: "Acme", Line: 2, EndLine: 4, Path: "Vendors > Acme"},
		{Level: 3, Title: "Pricing", Line: 3, EndLine: 4, Path: "Vendors > Acme > Pricing"},
		{Level: 2, Title: "Globex", Line: 5, EndLine: 9, Path: "Vendors > Globex"},
		{Level: 3, Title: "Pricing", Line: 6, EndLine: 9, Path: "Vendors > Globex > Pricing"},
	}})
	for _, want := range []string{
		"  ## Acme: lines 2-4\n",
		"    ### Pricing [Vendors > Acme > Pricing]: lines 3-4\n",
		"    ### Pricing [Vendors > Globex > Pricing]: lines 6-9\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("outline lacks %q:\n%s", want, got)
		}
	}
}
