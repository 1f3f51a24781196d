package slice

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestFoldPlainRunsSameDocument: folding long runs of plain lines for the
// parser changes no heading, title, line, section end or count, on runs
// in paragraphs (one a setext heading's title, at several lengths around
// paragraphTrim's steps), in code and HTML blocks, after quotes and list
// items, and with no heading at all.
func TestFoldPlainRunsSameDocument(t *testing.T) {
	run := func(n int) string { return strings.Repeat("x\n", n/2) + strings.Repeat("Ab9\n", n-n/2) }
	var docs []string
	for _, n := range []int{100, 8192 + 4096, 8192 + 4097, 20000, 24577, 24578, 40961, 60000} {
		docs = append(docs,
			run(n),
			"# Top\n\nintro\n\n"+run(n)+"===\n\n## Next\nbody\n",
			"first line\n"+run(n)+"---\n# After\n",
			"[ref]: /u\n\n"+run(n)+"[ref]\n===\n",
		)
	}
	n := 30000
	docs = append(docs,
		"```\n\n"+run(n)+"```\n# H\n",
		"<!--\n\n"+run(n)+"-->\n# H\n",
		"<div>\n\n"+run(n)+"</div>\n# H\n",
		"> quote\n\n"+run(n)+"\n# After\n",
		"- item\n\n"+run(n)+"- item\n# After\n",
		"    code\n\n"+run(n)+"    code\n## After\n",
		"---\ntitle: x\n---\n"+run(n)+"= \n",
		"TITLE\n\n"+run(n)+"\nOTHER\n\n"+run(n),
		"a\n\n"+run(n)+"b x\n"+run(n)+"c\n===\n",
	)
	nfolded := 0
	for i, doc := range docs {
		if v := foldPlainRuns([]byte(doc)); string(v) != doc {
			nfolded++
		}
		folded := ParseString(doc)
		parserView = func(v []byte) []byte { return v }
		plain := ParseString(doc)
		parserView = foldPlainRuns
		if folded.capped != plain.capped || folded.headingsCut != plain.headingsCut ||
			!reflect.DeepEqual(folded.headings, plain.headings) {
			t.Errorf("doc %d (%d bytes): folded %+v\nnot folded %+v", i, len(doc), short(folded.headings), short(plain.headings))
		}
	}
	if nfolded < 20 {
		t.Errorf("%d of %d documents folded; want most", nfolded, len(docs))
	}
}

// short gives headings with titles cut for a readable failure.
func short(hs []Heading) []Heading {
	out := append([]Heading(nil), hs...)
	for i := range out {
		if len(out[i].Title) > 40 {
			out[i].Title = out[i].Title[:20] + "…" + out[i].Title[len(out[i].Title)-20:]
		}
	}
	return out
}

// TestParseShortLinesBoundedMemory: a paragraph of 200,000 one-letter
// lines is parsed without a parser record per line (over 300 bytes a line
// allocated, 270 MB live at once for 5,000,000), and it folds: the parse
// allocates under 40 bytes a line, the line index and a copy of the text
// included.
func TestParseShortLinesBoundedMemory(t *testing.T) {
	const n = 200_000
	doc := strings.Repeat("x\n", n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := ParseString(doc)
	runtime.ReadMemStats(&after)
	if d.NumLines() != n {
		t.Fatalf("%d lines; want %d", d.NumLines(), n)
	}
	if perLine := float64(after.TotalAlloc-before.TotalAlloc) / n; perLine > 40 {
		t.Errorf("parsing allocated %.0f bytes a line; want at most 40", perLine)
	}
}

// TestParseBlankLinesBoundedMemory: the line index of a document of a
// million blank lines takes 4 bytes a line (8 before, 80 MB for ten
// million), and the parse allocates under 6 bytes a line in all.
func TestParseBlankLinesBoundedMemory(t *testing.T) {
	const n = 1_000_000
	doc := "a\n" + strings.Repeat("\n", n) + "b\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := ParseString(doc)
	runtime.ReadMemStats(&after)
	if d.NumLines() != n+2 || d.LineStart(n+2) != len(doc)-2 || d.LineOf(len(doc)-1) != n+2 {
		t.Fatalf("%d lines, the last at %d; want %d at %d", d.NumLines(), d.LineStart(n+2), n+2, len(doc)-2)
	}
	if perLine := float64(after.TotalAlloc-before.TotalAlloc) / n; perLine > 6 {
		t.Errorf("parsing allocated %.1f bytes a line; want at most 6", perLine)
	}
}
