package slice

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func seedDocs(f *testing.F) [][]byte {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	var out [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out,
		[]byte(""), []byte("#"), []byte("---\n---\n"), []byte("a\n===\n"), []byte("```\n# x\n"),
		[]byte("# A\r\n## B\r\n"), []byte("\xff\xfe# \x00\n"), []byte("> # q\n- # l\n    # c\n"))
}

// checkDocument holds for any input: headings lie inside the document and
// nest properly, and each has a unique path that a pointer finds it by.
func checkDocument(t *testing.T, d *Document) {
	n := d.NumLines()
	if len(d.Lines()) != n {
		t.Fatalf("Lines() has %d lines, NumLines %d", len(d.Lines()), n)
	}
	paths := map[string]bool{}
	for _, h := range d.Outline() {
		if h.Level < 1 || h.Level > 6 || h.Line < 1 || h.EndLine < h.Line || h.EndLine > n || len(h.Path) >= h.Level {
			t.Fatalf("bad heading %+v in a %d-line document", h, n)
		}
		if paths[h.UniquePath] {
			t.Fatalf("unique path %q given twice", h.UniquePath)
		}
		paths[h.UniquePath] = true
	}
}

func FuzzParse(f *testing.F) {
	for _, b := range seedDocs(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d := Parse(src)
		checkDocument(t, d)
		if d.Text() != string(src) {
			t.Fatal("Text() differs from the input")
		}
		combined, parts := Combine([]NamedDoc{{Name: "x", Data: src}, {Name: "y", Data: src}})
		c := Parse(combined)
		checkDocument(t, c)
		// Each file's heading must survive whatever the file holds.
		for _, p := range parts {
			if _, ok := headingAt(c, p.StartLine); !ok {
				t.Fatalf("file heading at line %d lost in:\n%s", p.StartLine, combined)
			}
		}
	})
}

// FuzzCombine: for any files, the combined document's top-level headings
// are exactly the files' names in order, and every file line maps back to
// itself (checkCombined).
func FuzzCombine(f *testing.F) {
	docs := seedDocs(f)
	endings := []string{"```", "~~~~~ x", "<div", "<p", "<!--", "<script>", "<?", "<!X", "<![CDATA[",
		"<custom a=\"b\">", "[a]: /u \"t", "- item", "> q", "    code", "| a |\n|---|", "text", "===", "---\nk: v\n---"}
	for i, e := range endings {
		f.Add([]byte(e+"\n"), docs[i%len(docs)], []byte(e))
	}
	for i := range docs {
		f.Add(docs[i], docs[(i+1)%len(docs)], docs[(i+2)%len(docs)])
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		// The fuzzer may hand out []byte arguments that share memory
		// (golang/go#71831); copies keep one argument's bytes from
		// showing up in another's, and show whether Combine writes to
		// its input.
		a, b, c = bytes.Clone(a), bytes.Clone(b), bytes.Clone(c)
		in := [][]byte{bytes.Clone(a), bytes.Clone(b), bytes.Clone(c)}
		checkCombined(t, []NamedDoc{{Name: "a.md", Data: a}, {Name: "b.md", Data: b}, {Name: "c.md", Data: c}})
		checkCombined(t, []NamedDoc{{Name: "b.md", Data: b}, {Name: "a.md", Data: a}})
		if !bytes.Equal(in[0], a) || !bytes.Equal(in[1], b) || !bytes.Equal(in[2], c) {
			t.Fatal("Combine changed its input")
		}
	})
}

// FuzzCombineName: a file's section heading reads exactly its name, for any
// name a file system could give (valid UTF-8, no control characters).
func FuzzCombineName(f *testing.F) {
	for _, n := range []string{"a.md", "_draft_.md", "x&amp;y", "# #", "a\\", "`x", "<b>", "[a]: b", "1) x", "***", "\u00a0x"} {
		f.Add(n, []byte("text\n"))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) || collapseSpace(name) == "" {
			return
		}
		name = collapseSpace(name)
		checkCombined(t, []NamedDoc{{Name: name, Data: bytes.Clone(data)}, {Name: name + " 2", Data: bytes.Clone(data)}})
	})
}

func FuzzExtract(f *testing.F) {
	for i, b := range seedDocs(f) {
		f.Add(b, "Results", "Methods > Sampling", i-3, i+5)
	}
	f.Fuzz(func(t *testing.T, src []byte, s1, s2 string, a, b int) {
		d := Parse(src)
		r := d.Extract(Pointers{Sections: []string{s1, s2}, LineRanges: [][2]int{{a, b}}})
		n := d.NumLines()
		if r.Fallback != (len(r.Matched) == 0) {
			t.Fatalf("fallback %v with %d matches", r.Fallback, len(r.Matched))
		}
		if len(r.Matched)+len(r.Unmatched) != 3 {
			t.Fatalf("%d matched + %d unmatched, want 3 pointers accounted for", len(r.Matched), len(r.Unmatched))
		}
		if r.Fallback {
			if r.Text != d.Text() {
				t.Fatal("fallback text is not the whole document")
			}
			return
		}
		for _, m := range r.Matched {
			if m.StartLine < 1 || m.EndLine < m.StartLine || m.EndLine > n {
				t.Fatalf("match %+v outside 1-%d", m, n)
			}
		}
		// Text is made of whole document lines, in order, each once. Lines
		// are cut as the document cuts them: a lone '\r' ends one too.
		lines := splitLines(d.Text())
		pos := 0
		for _, l := range splitLines(r.Text) {
			if l == "" {
				continue
			}
			for pos < len(lines) && lines[pos] != l {
				pos++
			}
			if pos == len(lines) {
				t.Fatalf("text line %q is not a document line in order", l)
			}
			pos++
		}
	})
}

// splitLines cuts s after each line break, by the document's rule ("\n",
// "\r\n" or a lone "\r").
func splitLines(s string) []string {
	starts := lineStarts([]byte(s))
	out := make([]string, starts.len())
	for i := range out {
		end := len(s)
		if i+1 < starts.len() {
			end = starts.at(i + 1)
		}
		out[i] = s[starts.at(i):end]
	}
	return out
}

// bigDoc builds about size bytes of varied markdown: nested headings,
// fences holding '#' lines, tables and prose.
func bigDoc(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "# Chapter %d\n\nIntro to chapter %d.\n\n", i, i)
		for j := 0; j < 5; j++ {
			fmt.Fprintf(&b, "## %d.%d Section about topic %d\n\n", i, j, i*5+j)
			b.WriteString("Some *emphasis*, `code` and a [link](http://example.com). ")
			b.WriteString(strings.Repeat("Lorem ipsum dolor sit amet. ", 6) + "\n\n")
			b.WriteString("```sh\n# a comment, not a heading\necho hi\n```\n\n")
			fmt.Fprintf(&b, "### Details %d\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n", j)
		}
	}
	return []byte(b.String())
}

func BenchmarkParseExtract(b *testing.B) {
	src := bigDoc(1 << 20)
	p := Pointers{
		Sections:   []string{"Chapter 100", "57.3 Section about topic 288", "Chapter 7 > Details 2", "Sectoin about topic 99", "Nothing like this"},
		LineRanges: [][2]int{{100, 200}},
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		r := Parse(src).Extract(p)
		if r.Fallback || len(r.Unmatched) != 1 {
			b.Fatalf("unexpected result: unmatched %q", r.Unmatched)
		}
	}
}
