package mapreduce

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/baton-dev/baton/tokens"
)

// meter counts with the real tokenizer and remembers how many bytes it was
// asked to count.
type meter struct {
	c     *tokens.Counter
	bytes atomic.Int64
}

func newMeter() *meter { return &meter{c: tokens.Default()} }

func (m *meter) Count(s string) int {
	m.bytes.Add(int64(len(s)))
	return m.c.Count(s)
}

func report(sections, paras int) string {
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := range sections {
		fmt.Fprintf(&b, "## Section %d\n\n", i+1)
		for j := range paras {
			fmt.Fprintf(&b, "Paragraph %d of section %d says something about widgets, gadgets and the weather.\nA second line of it.\n\n", j+1, i+1)
		}
	}
	return b.String()
}

// checkParts asserts what every split must hold: the parts give the text
// back, are numbered in order, and none is over the budget by the count of
// its lines.
func checkParts(t *testing.T, text string, parts []Part, budget int) {
	t.Helper()
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p.Text)
		if p.Index != i {
			t.Errorf("part %d has index %d", i, p.Index)
		}
		if p.Tokens > budget {
			t.Errorf("part %d has %d tokens, budget %d", i, p.Tokens, budget)
		}
		if p.Text == "" {
			t.Errorf("part %d is empty", i)
		}
		if !utf8.ValidString(p.Text) && utf8.ValidString(text) {
			t.Errorf("part %d cuts a rune: %q", i, p.Text)
		}
		if i > 0 && p.StartLine < parts[i-1].EndLine {
			t.Errorf("part %d starts at line %d before part %d ends (%d)", i, p.StartLine, i-1, parts[i-1].EndLine)
		}
	}
	if b.String() != text {
		t.Errorf("the parts do not give the text back")
	}
}

func TestSplitCutsAtHeadingsAndStaysInBudget(t *testing.T) {
	text := report(12, 4)
	c := newMeter()
	budget := 120
	parts, err := Split(text, budget, c)
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, text, parts, budget)
	if len(parts) < 5 {
		t.Fatalf("%d parts; want several", len(parts))
	}
	headings := 0
	for _, p := range parts[1:] {
		if strings.HasPrefix(p.Text, "## Section") {
			headings++
		}
		if n := c.c.Count(p.Text); n > budget+budget/10 {
			t.Errorf("part %d counts %d tokens as a whole, far over %d", p.Index, n, budget)
		}
	}
	// A section is ~95 tokens, so most cuts can fall on a heading while
	// keeping parts half full.
	if headings < (len(parts)-1)/2 {
		t.Errorf("only %d of %d parts start at a heading", headings, len(parts)-1)
	}
	again, _ := Split(text, budget, newMeter())
	for i := range parts {
		if parts[i] != again[i] {
			t.Fatalf("split is not deterministic at part %d", i)
		}
	}
}

func TestSplitPrefersParagraphsWithoutHeadings(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Line one of paragraph %d about widgets.\nLine two of paragraph %d.\n\n", i, i)
	}
	text := b.String()
	parts, err := Split(text, 50, newMeter())
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, text, parts, 50)
	for _, p := range parts[:len(parts)-1] {
		if !strings.HasSuffix(p.Text, "\n\n") {
			t.Errorf("part %d ends mid-paragraph: %q", p.Index, p.Text[max(0, len(p.Text)-40):])
		}
	}
}

// A line longer than the budget is cut between runes, never mid-rune, and
// only that line; its neighbours stay whole.
func TestSplitCutsAnOverlongLineByRunes(t *testing.T) {
	long := strings.Repeat("naïve café déjà vu — 東京 ", 400)
	text := "# Head\n\nshort before\n" + long + "\nshort after\n"
	budget := 100
	parts, err := Split(text, budget, newMeter())
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, text, parts, budget)
	if parts[0].Text != "# Head\n\nshort before\n" {
		t.Errorf("first part = %q", parts[0].Text)
	}
	if last := parts[len(parts)-1]; last.Text != "short after\n" {
		t.Errorf("last part = %q", last.Text)
	}
	for _, p := range parts[1 : len(parts)-1] {
		if p.StartLine != 4 || p.EndLine != 4 {
			t.Errorf("piece %d covers lines %d-%d, want 4-4", p.Index, p.StartLine, p.EndLine)
		}
	}
}

// Lone CR and CRLF end lines as LF does.
func TestSplitLineEndings(t *testing.T) {
	for name, nl := range map[string]string{"lf": "\n", "crlf": "\r\n", "cr": "\r"} {
		t.Run(name, func(t *testing.T) {
			text := strings.ReplaceAll(report(6, 3), "\n", nl)
			parts, err := Split(text, 80, newMeter())
			if err != nil {
				t.Fatal(err)
			}
			checkParts(t, text, parts, 80)
			if len(parts) < 3 {
				t.Errorf("%d parts: the line endings were not seen", len(parts))
			}
		})
	}
}

// Counting grows with the text: each line once, nothing counted again.
func TestSplitCountsEachLineOnce(t *testing.T) {
	for _, sections := range []int{50, 500} {
		text := report(sections, 5)
		c := newMeter()
		if _, err := Split(text, 300, c); err != nil {
			t.Fatal(err)
		}
		if got := c.bytes.Load(); got != int64(len(text)) {
			t.Errorf("%d sections: counted %d bytes of a %d-byte text", sections, got, len(text))
		}
	}
	// An overlong line is counted about twice: whole, then by pieces.
	text := strings.Repeat("word ", 20000)
	c := newMeter()
	if _, err := Split(text, 500, c); err != nil {
		t.Fatal(err)
	}
	if got := c.bytes.Load(); got > 3*int64(len(text)) {
		t.Errorf("counted %d bytes of a %d-byte line", got, len(text))
	}
}

func TestSplitEdges(t *testing.T) {
	if _, err := Split("x", 0, newMeter()); err != ErrBudget {
		t.Errorf("budget 0: err = %v", err)
	}
	if parts, err := Split("", 10, newMeter()); err != nil || len(parts) != 0 {
		t.Errorf("empty text: %v, %v", parts, err)
	}
	parts, err := Split("one line, no ending", 100, newMeter())
	if err != nil || len(parts) != 1 || parts[0].StartLine != 1 || parts[0].EndLine != 1 {
		t.Errorf("one line: %+v, %v", parts, err)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(report(3, 2), 20)
	f.Add("a\rb\r\nc\n\n# d\n", 1)
	f.Add(strings.Repeat("é", 300), 3)
	c := newMeter()
	f.Fuzz(func(t *testing.T, text string, budget int) {
		if budget < 1 || budget > 1000 || len(text) > 1<<14 {
			return
		}
		parts, err := Split(text, budget, c)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
			// Only a single rune may be over the budget: it cannot be cut.
			if p.Tokens > budget && utf8.RuneCountInString(p.Text) > 1 {
				t.Errorf("part %d: %d tokens > %d", p.Index, p.Tokens, budget)
			}
		}
		if b.String() != text {
			t.Errorf("parts do not give the text back")
		}
	})
}

// With a Breaker (an indexed count of the text), Split counts runs of
// lines between clean breaks from the index: it does not read the text
// again, and each part's Tokens is exactly the count of its Text.
func TestSplitWithBreakerReadsNothingAndCountsExactly(t *testing.T) {
	var read atomic.Int64
	c := tokens.Default().Metered(&read)
	text := report(30, 6) + "    indented code\n    more of it\n\n/path/at/line/start\n" + report(5, 4)
	ct := c.Indexed(text)
	read.Store(0)
	parts, err := Split(text, 300, ct)
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, text, parts, 300)
	if len(parts) < 5 {
		t.Fatalf("%d parts; want several", len(parts))
	}
	if got := read.Load(); got > int64(len(text))/20 {
		t.Errorf("Split read %d bytes of a %d-byte indexed text; want only the ends of runs", got, len(text))
	}
	for _, p := range parts {
		if want := tokens.Default().Count(p.Text); p.Tokens != want {
			t.Errorf("part %d: Tokens %d, its text counts %d", p.Index, p.Tokens, want)
		}
	}
	// The same text without a Breaker cuts between lines as before.
	plain, err := Split(text, 300, tokens.Default())
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, text, plain, 300)
}

// oneToken counts every text as one token: Split's own memory, not a
// tokenizer's, is what TestSplitManyLinesBoundedMemory measures.
type oneToken struct{}

func (oneToken) Count(string) int { return 1 }

// TestSplitManyLinesBoundedMemory: a text of a million blank lines is split
// with a few numbers a line, not a string header each (ten million took
// 1.2 GB), and the parts still give the text back.
func TestSplitManyLinesBoundedMemory(t *testing.T) {
	const n = 1_000_000
	text := strings.Repeat("\n", n)
	var parts []Part
	var err error
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	parts, err = Split(text, 1000, oneToken{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	if b.String() != text || len(parts) != n/1000 {
		t.Fatalf("%d parts that give back %d bytes; want %d parts and the text", len(parts), b.Len(), n/1000)
	}
	if perLine := float64(after.TotalAlloc-before.TotalAlloc) / n; perLine > 60 {
		t.Errorf("Split allocated %.0f bytes a line; want at most 60", perLine)
	}
}

// TestSplitKeepsNothingPerLine: Split reads the text in one pass and keeps
// only the parts, not an offset, unit or running sum a line (28 bytes a
// line, 280 MB for a 10 MB document of blank lines). Without and with a
// Breaker, a million short lines in a few parts allocate under 2 bytes a
// line, and the parts give the text back with their line numbers.
func TestSplitKeepsNothingPerLine(t *testing.T) {
	const n = 1_000_000
	text := strings.Repeat("x\n", n)
	for _, c := range []Counter{oneToken{}, tokens.Default().Indexed(text)} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		parts, err := Split(text, n/4, c)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		checkParts(t, text, parts, n/4)
		if len(parts) < 2 || parts[0].StartLine != 1 || parts[len(parts)-1].EndLine != n {
			t.Fatalf("%T: %d parts, first line %d, last line %d; want several from 1 to %d",
				c, len(parts), parts[0].StartLine, parts[len(parts)-1].EndLine, n)
		}
		for i := 1; i < len(parts); i++ {
			if parts[i].StartLine != parts[i-1].EndLine+1 {
				t.Errorf("%T: part %d starts at line %d after a part ending at %d", c, i, parts[i].StartLine, parts[i-1].EndLine)
			}
		}
		if perLine := float64(after.TotalAlloc-before.TotalAlloc) / n; perLine > 2 {
			t.Errorf("%T: Split allocated %.1f bytes a line; want at most 2", c, perLine)
		}
	}
}
