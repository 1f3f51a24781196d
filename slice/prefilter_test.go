package slice

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cheap tests before numberingRe and fillerRe must never refuse a title
// the expressions would change.
func checkPrefilters(t *testing.T, s string) {
	t.Helper()
	if !mayNumber(s) && numberingRe.MatchString(s) {
		t.Errorf("mayNumber(%q) is false, but numberingRe matches", s)
	}
	if !mayFiller(s) && fillerRe.MatchString(s) {
		t.Errorf("mayFiller(%q) is false, but fillerRe matches", s)
	}
}

func TestPrefilters(t *testing.T) {
	cases := []string{"3.2 Results", "§4 Scope", "Section 3", "SECT. 2", "sec. 1", "Chapter IV", "chap. 2", "ch. 3",
		"Part A", "Appendix B:", "app. C", "Step 2 -", "Phase 1", "Stage 3", "A. Intro", "iv) Notes", "(b) Item", "(12) x",
		"ſection 3", "The Results section", "the methods", "THE END", "Results Section", "Intro chapter", "Résumé",
		"A Tale", "Results", "", "x", "—dash", "K. Kelvin"}
	for _, c := range cases {
		checkPrefilters(t, c)
	}
	files, _ := filepath.Glob("testdata/*.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range Parse(b).Outline() {
			checkPrefilters(t, h.Title)
		}
		for _, l := range strings.Split(string(b), "\n") {
			checkPrefilters(t, collapseSpace(l))
		}
	}
}

func FuzzPrefilters(f *testing.F) {
	for _, s := range []string{"3.2 Results", "Section 3", "the x section", "iv) y", "ſection 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkPrefilters(t, s) })
}
