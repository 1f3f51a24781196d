package outline

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// sizeAt is what the outline of src shows at a depth, with or without
// leads, counted with bytes as tokens.
func sizeAt(t *testing.T, src string, depth int, leads bool) int {
	t.Helper()
	o := build(t, src, &byteCounter{}, 0)
	o.choose(depth, leads)
	return len(o.Text())
}

// fourLevels has headings nested four deep, each with a lead.
func fourLevels() string {
	// Long leads, so that dropping them frees more than collapsing does.
	filler := "with a long run of words that goes on and on before it reaches the end of its only sentence."
	var b strings.Builder
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "# Part %d\n\nPart %d opens here %s\n\n", i, i, filler)
		for j := 1; j <= 2; j++ {
			fmt.Fprintf(&b, "## Chapter %d.%d\n\nChapter text %s\n\n", i, j, filler)
			for k := 1; k <= 2; k++ {
				fmt.Fprintf(&b, "### Section %d.%d.%d\n\nSection text %s\n\n", i, j, k, filler)
				for l := 1; l <= 2; l++ {
					fmt.Fprintf(&b, "#### Point %d.%d.%d.%d\n\nThe finest detail %s\n\n", i, j, k, l, filler)
				}
			}
		}
	}
	return b.String()
}

func TestBudget(t *testing.T) {
	src := fourLevels()
	full := sizeAt(t, src, 4, true)
	d3, d2, d1 := sizeAt(t, src, 3, true), sizeAt(t, src, 2, true), sizeAt(t, src, 1, true)
	if !(full > d3 && d3 > d2 && d2 > d1) {
		t.Fatalf("sizes do not shrink with depth: %d %d %d %d", full, d3, d2, d1)
	}
	for _, tc := range []struct {
		name      string
		budget    int
		depth     int
		leads     bool
		maxLevel  int
		hiddenAt3 int // subsections a level-3 entry hides
	}{
		{"no budget", 0, 4, true, 4, 0},
		{"fits without collapsing", full, 4, true, 4, 0},
		{"collapses level 4", full - 1, 3, true, 3, 2},
		{"collapses level 4 exactly", d3, 3, true, 3, 2},
		{"then level 3", d3 - 1, 2, true, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := build(t, src, &byteCounter{}, tc.budget)
			if o.Depth != tc.depth || o.Leads != tc.leads {
				t.Fatalf("depth %d leads %v; want depth %d leads %v", o.Depth, o.Leads, tc.depth, tc.leads)
			}
			if tc.budget > 0 && o.Tokens > tc.budget {
				t.Errorf("outline is %d tokens, over the budget %d", o.Tokens, tc.budget)
			}
			maxLevel := 0
			for _, e := range o.Entries {
				maxLevel = max(maxLevel, e.Level)
				if e.Level == 3 && e.Hidden != tc.hiddenAt3 {
					t.Errorf("%s hides %d, want %d", e.Path, e.Hidden, tc.hiddenAt3)
				}
				if e.Lead == "" {
					t.Errorf("%s lost its lead", e.Path)
				}
			}
			if maxLevel != tc.maxLevel {
				t.Errorf("deepest level shown %d, want %d", maxLevel, tc.maxLevel)
			}
			// A collapsed entry keeps its path, range and whole size.
			if tc.depth == 2 {
				e := o.Entries[1]
				if e.Path != "Part 1 > Chapter 1.1" || e.Hidden != 6 || !strings.Contains(o.Text(), "6 subsections hidden") {
					t.Errorf("collapsed entry = %+v", e)
				}
				if w := len(lines(src, e.Line, e.EndLine)); e.Tokens != w {
					t.Errorf("collapsed entry's size %d, want the whole section's %d", e.Tokens, w)
				}
			}
		})
	}

	t.Run("drops leads", func(t *testing.T) {
		// Many top-level parts with long leads and short subsections: a
		// level of structure costs less than the leads do.
		var b strings.Builder
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&b, "# Part %d\n\nPart %d opens with a long run of words that goes on and on before it reaches the end of its only sentence.\n\n## A\n\n## B\n\n", i, i)
		}
		src := b.String()
		budget := sizeAt(t, src, 1, true) - 1
		o := build(t, src, &byteCounter{}, budget)
		if o.Leads {
			t.Fatalf("leads kept at budget %d, below the top level with leads (%d)", budget, d1)
		}
		for _, e := range o.Entries {
			if e.Lead != "" {
				t.Errorf("%s kept its lead", e.Path)
			}
		}
		// Once leads go, the structure comes back as deep as fits.
		want := 0
		for d := 2; d >= 1; d-- {
			if sizeAt(t, src, d, false) <= budget {
				want = d
				break
			}
		}
		if want != 2 || o.Depth != want {
			t.Errorf("depth without leads %d, want %d (the deepest that fits)", o.Depth, want)
		}
		if !strings.Contains(o.Text(), "First words are left out") {
			t.Errorf("outline does not say leads were dropped:\n%s", o.Text())
		}
	})

	t.Run("cannot fit", func(t *testing.T) {
		need := sizeAt(t, src, 1, false)
		_, err := Build([]Source{{Name: "r.md", Doc: slice.Parse([]byte(src))}}, &byteCounter{}, need-1)
		var tl *TooLargeError
		if !errors.Is(err, ErrTooLarge) || !errors.As(err, &tl) {
			t.Fatalf("err = %v, want a *TooLargeError wrapping ErrTooLarge", err)
		}
		if tl.Need != need || tl.Budget != need-1 || len(tl.PerDocument) != 1 || tl.PerDocument[0].Tokens != need {
			t.Errorf("error = %+v; want need %d, budget %d", tl, need, need-1)
		}
		if msg := err.Error(); !strings.Contains(msg, "split the document") || strings.Contains(msg, "\n") {
			t.Errorf("message %q should be one line telling the caller to split the document", msg)
		}
	})
}

func TestBudgetSplitDocuments(t *testing.T) {
	src := fourLevels()
	docs := []Source{
		{Name: "a.md", Doc: slice.Parse([]byte(src))},
		{Name: "b.md", Doc: slice.Parse([]byte(src))},
	}
	one, err := Build(docs[:1], &byteCounter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	one.choose(1, false)
	alone := len(one.Text())
	_, err = Build(docs, &byteCounter{}, alone+10)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a *TooLargeError", err)
	}
	if len(tl.PerDocument) != 2 || tl.PerDocument[0].Tokens > alone+10 || tl.PerDocument[1].Tokens > alone+10 || tl.Need <= alone+10 {
		t.Errorf("error = %+v; each document alone should fit %d, together not", tl, alone+10)
	}
	if !strings.Contains(err.Error(), "split the 2 documents into groups") {
		t.Errorf("message %q does not say to split by documents", err)
	}
}

// With a real tokenizer the sum of the parts' counts only estimates the
// rendered text; whatever Build returns must fit when counted whole.
func TestBudgetRealTokenizer(t *testing.T) {
	src := fourLevels()
	c := tokens.Default()
	full := build(t, src, c, 0).Tokens
	doc := slice.Parse([]byte(src))
	prev := ""
	for budget := full; budget > 0; budget -= max(full/40, 1) {
		o, err := Build([]Source{{Name: "r.md", Doc: doc}}, c, budget)
		if errors.Is(err, ErrTooLarge) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count(o.Text()); got > budget || got != o.Tokens {
			t.Fatalf("budget %d: outline counts %d (Tokens says %d)", budget, got, o.Tokens)
		}
		again, _ := Build([]Source{{Name: "r.md", Doc: doc}}, c, budget)
		if again.Text() != o.Text() {
			t.Fatalf("budget %d: two builds differ", budget)
		}
		prev = o.Text()
	}
	if prev == "" {
		t.Fatal("no budget produced an outline")
	}
}

// A document with more top-level headings than the budget has tokens cannot
// fit: Build says so from the count of its lines, without counting an
// outline larger than the document, and says the figure is a lower bound.
func TestBuildTooManyTopLevelHeadings(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "# H%d\n## sub\n", i)
	}
	doc := slice.ParseString(b.String())
	var counted atomic.Int64
	c := tokens.Default().Metered(&counted)
	_, err := Build([]Source{{Name: "big.md", Doc: doc}}, c, 2000)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Build: %v, want a TooLargeError", err)
	}
	if !tl.AtLeast || tl.Need != 3001 || len(tl.PerDocument) != 1 || tl.PerDocument[0].Tokens != 3001 {
		t.Errorf("error %+v, want a lower bound of 3001 tokens", tl)
	}
	if n := counted.Load(); n != 0 {
		t.Errorf("counted %d bytes to learn what the heading count says", n)
	}
	if !strings.Contains(err.Error(), "need at least 3001 tokens") {
		t.Errorf("message %q", err)
	}
}

// An outline of one document that does not fit even at the top level is
// counted once to say how much it needs, not again for the document alone:
// the two texts are the same.
func TestTooLargeCountsOnce(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "# Heading number %d of the long document\n\nSome text.\n\n## sub\n", i)
	}
	var counted atomic.Int64
	c := tokens.Default().Metered(&counted)
	o := build(t, b.String(), c, 0)
	o.choose(1, false)
	text := o.Text()
	counted.Store(0)
	var tl *TooLargeError
	if err := o.tooLarge(c); !errors.As(err, &tl) {
		t.Fatalf("tooLarge: %v, want a TooLargeError", err)
	}
	if want := tokens.Default().Count(text); tl.Need != want || len(tl.PerDocument) != 1 || tl.PerDocument[0].Tokens != want {
		t.Errorf("error %+v, want %d tokens for the document and in all", tl, want)
	}
	if n := counted.Load(); n != int64(len(text)) {
		t.Errorf("counted %d bytes for a top-level outline of %d", n, len(text))
	}
}
