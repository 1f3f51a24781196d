package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestGitAlwaysProtected: .git is off limits with no rules at all, by any
// spelling and through symlinks. write_file could rewrite .git/config (and
// with it the hooks git runs) before.
func TestGitAlwaysProtected(t *testing.T) {
	w, _ := setup(t)
	root := w.Root()
	os.MkdirAll(filepath.Join(root, "sub", ".git"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", ".git", "config"), []byte("hello sub git\n"), 0o644)
	for name, target := range map[string]string{"docs/g": "../.git", "gitcfg": ".git/config", "gitabs": filepath.Join(root, ".git")} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{".git/config", ".GIT/config", ".git/hooks/pre-commit", ".git", "docs/../.git/config",
		"docs/g/config", "gitcfg", "gitabs/config", "sub/.git/config", "link-in-dir/g/HEAD"}
	for _, p := range paths {
		if _, err := w.ReadFile(p, 0); !errors.Is(err, ErrProtected) {
			t.Errorf("ReadFile(%q) = %v, want ErrProtected", p, err)
		}
		if err := w.WriteFile(p, []byte("pwned\n")); !errors.Is(err, ErrProtected) {
			t.Errorf("WriteFile(%q) = %v, want ErrProtected", p, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(got) != "hello git\n" {
		t.Errorf(".git/config changed to %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "sub", ".git", "config")); string(got) != "hello sub git\n" {
		t.Errorf("sub/.git/config changed to %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, ".git")); len(entries) != 1 {
		t.Errorf(".git holds %d entries, want only config", len(entries))
	}
	for _, pat := range []string{"**", ".git/*", "**/config", "docs/g/*", "sub/.git/*", "gitcfg"} {
		got, err := w.List(pat)
		if err != nil {
			t.Fatalf("List(%q): %v", pat, err)
		}
		for _, p := range got {
			if p == "gitcfg" || filepath.Base(filepath.Dir(p)) == ".git" || filepath.Dir(p) == "docs/g" {
				t.Errorf("List(%q) shows %q", pat, p)
			}
		}
	}
	hits, err := w.Search("git", SearchOptions{Glob: "**"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("Search found %+v inside .git", h)
	}
}
