package slice

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// LF, CRLF and a lone CR all end a line: the same document written with
// each has the same headings on the same lines, and the same line ranges.
func TestLineEndings(t *testing.T) {
	lf := "---\ntitle: x\n---\n# A\n\ntext\n\n## B\n\nmore\n# C\nlast"
	want := Parse([]byte(lf))
	for name, eol := range map[string]string{"CRLF": "\r\n", "CR": "\r"} {
		src := strings.ReplaceAll(lf, "\n", eol)
		d := Parse([]byte(src))
		if diff := cmp.Diff(want.Outline(), d.Outline(), cmpopts.IgnoreUnexported(Heading{})); diff != "" {
			t.Errorf("%s: outline (-LF +%s):\n%s", name, name, diff)
		}
		if d.NumLines() != want.NumLines() || !cmp.Equal(d.Lines(), want.Lines()) {
			t.Errorf("%s: %d lines %q, want %d %q", name, d.NumLines(), d.Lines(), want.NumLines(), want.Lines())
		}
		r := d.Extract(Pointers{Sections: []string{"B"}, LineRanges: [][2]int{{11, 11}}})
		if wantText := "## B" + eol + eol + "more" + eol + "# C" + eol; r.Text != wantText {
			t.Errorf("%s: text %q, want %q", name, r.Text, wantText)
		}
	}
	// Mixed endings in one document count each line once.
	d := Parse([]byte("# A\rone\r\n# B\ntwo\r# C\n"))
	var got []string
	for _, h := range d.Outline() {
		got = append(got, h.Title)
	}
	if !cmp.Equal(got, []string{"A", "B", "C"}) || d.NumLines() != 5 {
		t.Errorf("mixed endings: headings %q, %d lines", got, d.NumLines())
	}
}

// Combining a file with lone CR endings keeps its headings and line map.
func TestCombineLoneCR(t *testing.T) {
	out, parts := Combine([]NamedDoc{{Name: "a.md", Data: []byte("# A\rtext\r## B\rmore\r")}, {Name: "b.md", Data: []byte("# C\n")}})
	d := Parse(out)
	var got []string
	for _, h := range d.Outline() {
		got = append(got, h.UniquePath)
	}
	want := []string{"a.md", "a.md > A", "a.md > A > B", "b.md", "b.md > C"}
	if !cmp.Equal(got, want) {
		t.Errorf("headings %q, want %q\n%q", got, want, out)
	}
	if len(parts) != 2 || parts[0].EndLine != 5 || parts[1].StartLine != 6 {
		t.Errorf("parts %+v", parts)
	}
}
