package workspace

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Patterns as skills and models write them: {a,b} alternatives, inside a
// segment and across segments, with ** anywhere.
func TestListAlternatives(t *testing.T) {
	w, _ := setup(t)
	tests := []struct {
		pattern string
		want    []string
	}{
		{"**/*.{md,go}", []string{"a.md", "docs/b.md", "docs/deep/c.go"}},
		{"*.{md,go}", []string{"a.md"}},
		{"{docs,nothing}/*.md", []string{"docs/b.md"}},
		{"{docs/deep,.hidden}/*", []string{".hidden/h.md", "docs/deep/back", "docs/deep/c.go"}},
		{"docs/{deep/c.go,b.md}", []string{"docs/b.md", "docs/deep/c.go"}},
		{"**/{b,c}.{md,go}", []string{"docs/b.md", "docs/deep/c.go"}},
		{"{a,b}.md", []string{"a.md"}},
		{"**/*.{py}", nil},
		{"{}", nil},
		{"{,docs/b.md}", []string{"docs/b.md"}},
		{".", []string{"a.md", "bin.dat", "docs/b.md", "docs/deep/back", "docs/deep/c.go", "link-in", "link-in-abs"}},
		// The rules still apply inside alternatives.
		{"{.git,docs}/*", []string{"docs/b.md"}},
	}
	for _, tt := range tests {
		got, err := w.List(tt.pattern)
		if err != nil {
			t.Errorf("List(%q): %v", tt.pattern, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("List(%q) (-want +got):\n%s", tt.pattern, diff)
		}
	}
}

func TestSearchGlobAlternatives(t *testing.T) {
	w, _ := setup(t)
	hits, err := w.Search("hello", SearchOptions{IgnoreCase: true, Glob: "**/*.{go,md}"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Path)
	}
	if diff := cmp.Diff([]string{"a.md", "docs/b.md", "docs/deep/c.go"}, paths); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}

// A malformed pattern is a clear one-line error a model can act on, never
// an empty list it would read as "no such files".
func TestListBadPatterns(t *testing.T) {
	w, _ := setup(t)
	for _, pat := range []string{"[bad", "*.{md,go", "docs/{a,b", `trailing\`, "**/" + strings.Repeat("{a,b}", 12)} {
		got, err := w.List(pat)
		if !errors.Is(err, ErrBadPattern) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), pat) {
			t.Errorf("List(%q) = %v, %v; want one line naming the pattern and wrapping ErrBadPattern", pat, got, err)
		}
		if _, err := w.Search("x", SearchOptions{Glob: pat}); !errors.Is(err, ErrBadPattern) {
			t.Errorf("Search glob %q: err = %v, want ErrBadPattern", pat, err)
		}
	}
	// ".." inside an alternative leaves the workspace as surely as outside one.
	if _, err := w.List("{..,docs}/*"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("List({..,docs}/*) = %v, want ErrOutsideWorkspace", err)
	}
}

func TestIsGlob(t *testing.T) {
	for p, want := range map[string]bool{"a.md": false, "docs/*.md": true, "x?.go": true, "[ab].md": true, "*.{py,md}": true, "{a,b}.md": true, "a,b.md": false} {
		if got := IsGlob(p); got != want {
			t.Errorf("IsGlob(%q) = %v, want %v", p, got, want)
		}
	}
}
