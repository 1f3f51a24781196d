package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// baton run's tools refuse what the write policy denies in every
// workspace, with no rules given: host, hook and CI configuration, skill
// folders found on disk, secrets (not even read), by any spelling and
// through symlinks; the tree is unchanged after every refusal.
func TestWritePolicyHoldsForRunTools(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		".claude/settings.json":    "{}",
		".github/workflows/ci.yml": "on: push\n",
		"skills/review/SKILL.md":   "---\nname: review\n---\n",
		".env":                     "TOKEN=s3cret\n",
		"docs/guide.md":            "# Guide\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"notes.md": ".claude/settings.json", "ci": ".github/workflows", "env.md": ".env"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("SKIPPED: no symlinks here: %v", err)
		}
	}
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	w = writable(t, w)
	defer w.Close()
	before := snapshot(t, dir)
	for _, p := range []string{
		".claude/settings.json", ".Claude/settings.json", ".cla\u200cude/settings.json", "claude~1/settings.json",
		".github/workflows/ci.yml", "ci/ci.yml", "notes.md", ".mcp.json", ".envrc", "CLAUDE.md", "Baton.YAML",
		"skills/review/SKILL.md", "skills/review/scripts/run.sh", ".husky/pre-commit", ".env", "env.md",
	} {
		if err := w.WriteFile(p, []byte("x")); !errors.Is(err, ErrProtected) || !errors.Is(err, writepolicy.ErrDenied) {
			t.Errorf("WriteFile(%q) = %v, want a refusal of the write policy", p, err)
		}
	}
	for _, p := range []string{".env", "env.md", ".ENV"} {
		if _, err := w.ReadFile(p, 1<<20); !errors.Is(err, writepolicy.ErrDenied) {
			t.Errorf("ReadFile(%q) = %v, want a refusal", p, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}
	if _, err := w.ReadFile(".claude/settings.json", 1<<20); err != nil {
		t.Errorf("host configuration is readable: %v", err)
	}
	if err := w.WriteFile("docs/notes.md", []byte("# Notes\n")); err != nil {
		t.Errorf("a document: %v", err)
	}
}
