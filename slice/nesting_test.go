package slice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/mdshapes"
)

func titlesAndLines(d *Document) []string {
	var out []string
	for _, h := range d.Outline() {
		out = append(out, fmt.Sprintf("%d %s", h.Line, h.UniquePath))
	}
	return out
}

// Containers nested past MaxNesting are read as text: the headings around
// them are found where they are, and the document says how many lines were
// cut. Each body nests far deeper than the bound, in one line or in many.
func TestParseCapsNesting(t *testing.T) {
	bodies := map[string]string{
		"quote markers on one line": strings.Repeat(">", 5000) + " deep\n",
		"list markers on one line":  strings.Repeat("- ", 5000) + "deep\n",
		"nested list lines": func() string {
			var b strings.Builder
			for i := range 300 {
				b.WriteString(strings.Repeat(" ", 2*i) + "- item\n")
			}
			return b.String()
		}(),
		"nested quote lines": func() string {
			var b strings.Builder
			for i := range 300 {
				b.WriteString(strings.Repeat("> ", i+1) + "q\n")
			}
			return b.String()
		}(),
		"mixed on one line": strings.Repeat("> 1. ", 2000) + "x\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			src := "# Before\n\n" + body + "\n# After\n\ntext\n"
			d := Parse([]byte(src))
			after := strings.Count("# Before\n\n"+body+"\n", "\n") + 1
			want := []string{"1 Before", fmt.Sprintf("%d After", after)}
			if got := titlesAndLines(d); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("headings %q, want %q", got, want)
			}
			if d.CappedLines() == 0 {
				t.Errorf("no line was reported cut")
			}
		})
	}
}

// The cut keeps the parse view's length and line breaks, which map the
// parser's offsets to lines, and changes nothing of a document that nests
// as people write (every document the tests and docs hold).
func TestCapNestingKeepsLinesAndLeavesRealDocuments(t *testing.T) {
	for _, s := range mdshapes.All() {
		src := s.Build()
		v, _ := capNesting(src)
		if len(v) != len(src) || bytes.Count(v, []byte("\n")) != bytes.Count(src, []byte("\n")) {
			t.Errorf("%s: the view changed length or line breaks", s.Name)
		}
		for i := range src {
			if (src[i] == '\n') != (v[i] == '\n') {
				t.Fatalf("%s: line break moved at byte %d", s.Name, i)
			}
		}
	}
	var files []string
	for _, pat := range []string{"testdata/*.md", "../internal/bench/testdata/corpus/*.md", "../docs/*.md", "../*.md"} {
		fs, _ := filepath.Glob(pat)
		files = append(files, fs...)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if v, n := capNesting(src); n != 0 || &v[0] != &src[0] {
			t.Errorf("%s: %d lines cut", f, n)
		}
	}
}

// cancelAfter is a context that reports itself cancelled from its n-th
// look on: the parse is stopped part way, as Ctrl-C would stop it.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

func TestParseContextStops(t *testing.T) {
	var b strings.Builder
	for i := range 40_000 {
		fmt.Fprintf(&b, "# H%d\n\ntext\n", i)
	}
	src := b.String()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := ParseContext(ctx, src); !errors.Is(err, context.Canceled) || d != nil {
		t.Errorf("cancelled before: %v, %v", d, err)
	}
	// Cancelled mid-parse: the parse must look again after it started,
	// and stop with the error rather than return part of the headings.
	mid := &cancelAfter{Context: context.Background(), n: 50}
	if d, err := ParseContext(mid, src); !errors.Is(err, context.Canceled) || d != nil {
		t.Errorf("cancelled mid-parse: document %v, error %v", d != nil, err)
	}
	d, err := ParseContext(context.Background(), src)
	if err != nil || len(d.Outline()) != 40_000 {
		t.Fatalf("not cancelled: %v", err)
	}
}
