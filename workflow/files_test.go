package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// <files_to_read> globs with {a,b} alternatives read what they name; a
// malformed one is reported as such, not as "no file matches".
func TestExpandAlternatives(t *testing.T) {
	ws, _ := workspaceWith(t, map[string]string{
		"src/app.py":      "print(1)\n",
		"src/lib/util.py": "x = 1\n",
		"docs/guide.md":   "# Guide\n",
		"docs/notes.txt":  "n\n",
		"README.md":       "# R\n",
	})
	got := Expand(ws, []string{"**/*.{py,md}", "{docs,src}/*.txt", "docs/{guide,missing}.md", "src/*.{py"})
	want := []Match{
		{Pattern: "**/*.{py,md}", Paths: []string{"README.md", "docs/guide.md", "src/app.py", "src/lib/util.py"}},
		{Pattern: "{docs,src}/*.txt", Paths: []string{"docs/notes.txt"}},
		{Pattern: "docs/{guide,missing}.md", Paths: []string{"docs/guide.md"}},
		{Pattern: "src/*.{py", Problem: "invalid glob pattern (every [ and { must be closed)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
}
