package slice

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// within reports whether sub's bytes lie inside s's: a part of it, not a
// copy.
func within(sub, s string) bool {
	if len(sub) == 0 {
		return true
	}
	b, p := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return p >= b && p+uintptr(len(sub)) <= b+uintptr(len(s))
}

func partsDoc(sections int) string {
	var b strings.Builder
	for i := range sections {
		b.WriteString("# Part " + string(rune('A'+i%26)) + strings.Repeat("x", i/26) + "\n\n")
		b.WriteString(strings.Repeat("Some words of the part, on a line of their own.\n", 200))
	}
	return b.String()
}

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestParseStringShares: the whole text, a fallback and a cut of one run of
// lines are the caller's string, not copies of it (a run's context of 10 MB
// was held once more by the Document, and again by every fallback).
func TestParseStringShares(t *testing.T) {
	s := partsDoc(40)
	d := ParseString(s)
	if !within(d.Text(), s) {
		t.Error("Text() is a copy")
	}
	fb := d.Extract(Pointers{Sections: []string{"No such part"}})
	if !fb.Fallback || !within(fb.Text, s) {
		t.Errorf("fallback (%v) text is a copy", fb.Fallback)
	}
	one := d.Extract(Pointers{Sections: []string{"Part C"}})
	if len(one.Matched) != 1 || !within(one.Text, s) {
		t.Errorf("a one-section cut (%d matched) is a copy", len(one.Matched))
	}
	if n := allocated(func() { d.Extract(Pointers{LineRanges: [][2]int{{1, d.NumLines()}}}) }); n > uint64(len(s))/10 {
		t.Errorf("cutting every line allocated %d bytes of a %d-byte document", n, len(s))
	}
	two := d.Extract(Pointers{Sections: []string{"Part B", "Part D"}})
	if !strings.HasPrefix(two.Text, "# Part B\n") || !strings.Contains(two.Text, "# Part D\n") || strings.Contains(two.Text, "# Part C\n") {
		t.Errorf("two cuts: %.40q", two.Text)
	}
}

func TestLinesText(t *testing.T) {
	for _, src := range []string{"# A\nx\n\n## B\ny\nz\n", "# A\r\nx\r\n## B\r\ny", "a\rb\rc\r", "one line", ""} {
		d := ParseString(src)
		lines := d.Lines()
		for from := 0; from <= len(lines)+1; from++ {
			for to := from; to <= len(lines)+1; to++ {
				a, b := max(from, 1), min(to, len(lines))
				want := ""
				if a <= b {
					want = strings.Join(lines[a-1:b], "\n")
				}
				got := d.LinesText(from, to)
				// Terminators between lines are the document's own.
				if strings.ReplaceAll(strings.ReplaceAll(got, "\r\n", "\n"), "\r", "\n") != want {
					t.Errorf("%q: LinesText(%d, %d) = %q, want %q", src, from, to, got, want)
				}
				if !within(got, src) {
					t.Errorf("%q: LinesText(%d, %d) is a copy", src, from, to)
				}
			}
		}
	}
}

// TestLinesOnly: a document indexed by line alone cuts line ranges as a
// parsed one does, and parses no markdown (it finds no heading).
func TestLinesOnly(t *testing.T) {
	src := "# A\r\nx\ry\n## B\nz"
	p, l := Parse([]byte(src)), LinesOnly([]byte(src))
	if l.NumLines() != p.NumLines() || len(l.Outline()) != 0 {
		t.Fatalf("LinesOnly: %d lines, %d headings; Parse: %d lines", l.NumLines(), len(l.Outline()), p.NumLines())
	}
	for _, lr := range [][2]int{{1, 1}, {2, 3}, {0, 9}, {5, 5}, {4, 2}, {7, 9}} {
		ptrs := Pointers{LineRanges: [][2]int{lr}}
		a, b := p.Extract(ptrs), l.Extract(ptrs)
		if a.Text != b.Text || a.Fallback != b.Fallback || strings.Join(a.Warnings, ";") != strings.Join(b.Warnings, ";") {
			t.Errorf("lines %v: LinesOnly cut %q (%v), Parse %q (%v)", lr, b.Text, b.Warnings, a.Text, a.Warnings)
		}
	}
}

// readOnlyDoc is a constant: its bytes live in read-only memory, so a parse
// that wrote to the text it shares would crash rather than pass.
const readOnlyDoc = "---\ntitle: x\n---\n# A\tTab\r\nline\rlone CR\n\nSetext *b*\n===\n\n<div>\n# not\n</div>\n\n- <kbd>k</kbd>\n\n[r]: /u\n## [r] &amp; \\*e\\*\n    code\n```\n# fenced\n```\n"

// readOnlyFrontMatter has front matter and no lone CR, so the parse blanks
// the front matter in a copy it makes itself.
const readOnlyFrontMatter = "---\nk: v\n---\n# Only\ntext\n"

func TestParseStringDoesNotWrite(t *testing.T) {
	if hs := ParseString(readOnlyFrontMatter).Outline(); len(hs) != 1 || hs[0].Title != "Only" || hs[0].Line != 4 {
		t.Errorf("front matter document: %+v", hs)
	}
	d := ParseString(readOnlyDoc)
	var titles []string
	for _, h := range d.Outline() {
		titles = append(titles, h.Title)
	}
	if got := strings.Join(titles, "|"); got != "A Tab|Setext b|r & *e*" {
		t.Errorf("headings %q", got)
	}
	r := d.Extract(Pointers{Sections: []string{"Setext b", "A Tab"}, LineRanges: [][2]int{{1, 2}}})
	if len(r.Matched) != 3 || !strings.Contains(r.Text, "lone CR") {
		t.Errorf("extract: %+v", r)
	}
	combined, _ := Combine([]NamedDoc{{Name: "a.md", Data: []byte(readOnlyDoc)}})
	if len(Parse(combined).Outline()) != 4 {
		t.Errorf("combined outline: %+v", Parse(combined).Outline())
	}
}
