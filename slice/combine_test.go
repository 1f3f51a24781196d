package slice

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCombine(t *testing.T) {
	docs := []NamedDoc{
		{Name: "a.md", Data: []byte("# Alpha\ntext\n## Sub\n###### Deep\nSet\n===\nmore\n")},
		{Name: "notes.txt", Data: []byte("no headings\nat all")},
		{Name: "open.md", Data: []byte("````go\n# inside\n")},
		{Name: "front.md", Data: []byte("---\ntitle: x\n---\nSetext two\nlines\n---\nbody #\n")},
		{Name: "html.md", Data: []byte("<!-- never closed\n")},
		{Name: "b.md", Data: []byte("# Beta\n")},
	}
	combined, parts := Combine(docs)
	d := Parse(combined)
	want := "" +
		"1-8 # a.md\n" +
		"2-5 ## Alpha  [a.md]\n" +
		"4-5 ### Sub  [a.md > Alpha]\n" +
		"5-5 ###### Deep  [a.md > Alpha > Sub]\n" +
		"6-8 ## Set  [a.md]\n" +
		"9-11 # notes.txt\n" +
		"12-15 # open.md\n" +
		"16-23 # front.md\n" +
		"20-23 ### Setext two lines  [front.md]\n" +
		"24-26 # html.md\n" +
		"27-28 # b.md\n" +
		"28-28 ## Beta  [b.md]\n"
	if diff := cmp.Diff(want, outlineString(d.Outline())); diff != "" {
		t.Errorf("combined outline (-want +got):\n%s\ncombined:\n%s", diff, combined)
	}
	// Every line of every file maps back to itself, except the rewritten
	// heading and fence lines.
	lines := d.Lines()
	for i, p := range parts {
		if p.Name != docs[i].Name {
			t.Errorf("part %d name %q, want %q", i, p.Name, docs[i].Name)
		}
		if lines[p.StartLine-1] != "# "+p.Name {
			t.Errorf("part %q starts at %q", p.Name, lines[p.StartLine-1])
		}
		src := Parse(docs[i].Data).Lines()
		for k, l := range src {
			got, ok := p.SourceLine(p.StartLine + k + 1)
			if !ok || got != k+1 {
				t.Fatalf("part %q: line %d maps to %d, %v", p.Name, k+1, got, ok)
			}
			if c := lines[p.StartLine+k]; c != l && !strings.Contains(c, "#") && !strings.HasPrefix(c, "~~~~") && c != "" {
				t.Errorf("part %q line %d: %q became %q", p.Name, k+1, l, c)
			}
		}
		if _, ok := p.SourceLine(p.StartLine); ok {
			t.Errorf("part %q: the added heading mapped to a file line", p.Name)
		}
	}
	r := d.Extract(Pointers{Sections: []string{"a.md > Alpha > Sub", "b.md"}})
	if r.Fallback || len(r.Unmatched) != 0 || !strings.Contains(r.Text, "Deep") || !strings.HasSuffix(r.Text, "## Beta\n") {
		t.Errorf("extract from combined: %+v", r)
	}
}

func TestCombineEmpty(t *testing.T) {
	combined, parts := Combine(nil)
	if len(combined) != 0 || len(parts) != 0 {
		t.Errorf("Combine(nil) = %q, %v", combined, parts)
	}
	combined, parts = Combine([]NamedDoc{{Name: " odd\nname ", Data: nil}})
	if !bytes.Equal(combined, []byte("# odd name\n")) || parts[0].StartLine != 1 || parts[0].EndLine != 1 {
		t.Errorf("Combine(empty doc) = %q, %+v", combined, parts)
	}
}
