package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-dev/baton/slice"
)

// benchLikeDoc repeats the bench corpus, each copy under a heading of its
// own as bench's memory run builds it, to at least size bytes, and returns
// it with its sections as the assembler's outline gives them.
func benchLikeDoc(t testing.TB, size int) (string, []SectionText) {
	t.Helper()
	files, err := filepath.Glob("../internal/bench/testdata/corpus/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bench corpus: %v", err)
	}
	var texts []string
	for _, f := range files {
		if filepath.Base(f) == "SOURCES.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "# Copy %d of %s\n\n%s\n", i+1, filepath.Base(files[i%len(texts)]), texts[i%len(texts)])
	}
	doc := sb.String()
	d := slice.Parse([]byte(doc))
	lines := d.Lines()
	var secs []SectionText
	for _, h := range d.Outline() {
		secs = append(secs, SectionText{Title: h.Title, Path: h.Path, Level: h.Level, Line: h.Line, EndLine: h.EndLine,
			Text: strings.Join(lines[h.Line-1:h.EndLine], "\n")})
	}
	return doc, secs
}

// liveHeap is the live heap after a full collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestIndexHeldBytes bounds what the retrieval index keeps over 2 MB of
// the bench corpus: below twice the document's size (postings once per
// section hold about 0.9×). A count per term per section summed up the
// heading tree, and a copy of each with the path terms, held 9×.
func TestIndexHeldBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2 MB corpus")
	}
	doc, secs := benchLikeDoc(t, 2<<20)
	before := liveHeap()
	ix := newIndex(secs)
	held := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(ix)
	t.Logf("index over %d bytes, %d sections: %d bytes held (%.2f× the document)", len(doc), len(secs), held, float64(held)/float64(len(doc)))
	if held > 2*int64(len(doc)) {
		t.Errorf("the index holds %d bytes, %.2f× the %d-byte document; want at most 2×", held, float64(held)/float64(len(doc)), len(doc))
	}
}

// BenchmarkNewIndex builds the index over 2 MB of the bench corpus and
// reports the bytes it allocates and, per byte of the document, holds.
func BenchmarkNewIndex(b *testing.B) {
	doc, secs := benchLikeDoc(b, 2<<20)
	before := liveHeap()
	ix := newIndex(secs)
	held := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(ix)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		newIndex(secs)
	}
	b.ReportMetric(float64(held)/float64(len(doc)), "held/doc-byte")
}
