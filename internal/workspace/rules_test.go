package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// protectedTree builds a workspace holding baton's own kinds of files, each
// marked PROTECTED, beside ordinary ones marked OK, with symlinks leading
// into the protected ones.
func protectedTree(t *testing.T) *Workspace {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".git/config":                 "MARK PROTECTED git\n",
		".baton/current.json":         "MARK PROTECTED current\n",
		".baton/runs/r1/journal.json": "MARK PROTECTED journal\n",
		"baton.yaml":                  "MARK PROTECTED workflow\n",
		"skills/x/SKILL.md":           "MARK PROTECTED skill\n",
		"skills/x/notes.md":           "MARK OK notes\n",
		"docs/ok.md":                  "MARK OK docs\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"docs/b":   "../.baton",
		"docs/g":   "../.git",
		"cfg":      "baton.yaml",
		"skl":      "skills/x",
		"absbaton": filepath.Join(root, "baton.yaml"),
		"sk":       "skills/x/SKILL.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skip("symlinks unavailable:", err)
		}
	}
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// snapshot maps every entry under root to its content (or link target).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			data, _ := os.ReadFile(p)
			out[rel] = string(data)
		}
		return nil
	})
	return out
}

func TestRulesDeny(t *testing.T) {
	base := protectedTree(t)
	w, err := base.Restrict(Rules{Deny: []string{".baton", "baton.yaml", "skills/**/SKILL.md"}, Write: everything})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, w.Root())
	paths := []string{
		".git/config", ".GIT/CONFIG", ".git/new",
		".baton/current.json", ".BATON/current.json", ".baton/runs/r1/journal.json", ".baton/new.json", ".baton",
		"baton.yaml", "BATON.YAML", "Baton.Yaml", "baton.yaml.", "./baton.yaml", "docs/../baton.yaml",
		"skills/x/SKILL.md", "skills/x/skill.md", "SKILLS/X/SKILL.MD", "skills/y/SKILL.md",
		"docs/b/current.json", "docs/b/new.json", "docs/g/config", "cfg", "absbaton", "skl/SKILL.md", "sk",
	}
	for _, p := range paths {
		got, err := w.ReadFile(p, 0)
		if !errors.Is(err, ErrProtected) {
			t.Errorf("ReadFile(%q) = %q, %v; want ErrProtected", p, got, err)
		}
		werr := w.WriteFile(p, []byte("MARK PWNED\n"))
		if !errors.Is(werr, ErrProtected) {
			t.Errorf("WriteFile(%q) = %v, want ErrProtected", p, werr)
		}
		for _, e := range []error{err, werr} {
			if e != nil && (strings.Contains(e.Error(), "\n") || !strings.Contains(e.Error(), " "+p+": protected by baton (")) {
				t.Errorf("error %q: want one line naming %q as given", e, p)
			}
		}
		if _, err := w.Resolve(p); !errors.Is(err, ErrProtected) {
			t.Errorf("Resolve(%q) = %v, want ErrProtected", p, err)
		}
	}
	want := "write .git/config: protected by baton (baton's own files, git's, the workflow, skills, host, editor, hook and CI configuration and the paths in baton.yaml's protect: list are off limits)"
	if err := w.WriteFile(".git/config", nil); err == nil || err.Error() != want {
		t.Errorf("WriteFile(.git/config) = %v\nwant %s", err, want)
	}
	if diff := cmp.Diff(before, snapshot(t, w.Root())); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}

	shown := map[string]bool{}
	for _, pat := range []string{"", "**", ".baton/**", ".baton/*", "skills/**", "**/SKILL.md", "**/*.md", "docs/b/*", "docs/g/*", ".git/*", "*", "cfg", "sk", "skl/*", "absbaton", "BATON.YAML", "baton.yaml"} {
		got, err := w.List(pat)
		if err != nil {
			t.Errorf("List(%q): %v", pat, err)
		}
		for _, p := range got {
			shown[p] = true
		}
	}
	if diff := cmp.Diff(map[string]bool{"docs/ok.md": true, "skills/x/notes.md": true, "skl/notes.md": true}, shown); diff != "" {
		t.Errorf("List shows (-want +got):\n%s", diff)
	}
	for _, glob := range []string{"", ".baton/**", "skills/**", "docs/b/*", "*"} {
		hits, err := w.Search("MARK", SearchOptions{Glob: glob})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if !strings.Contains(h.Text, "MARK OK") {
				t.Errorf("Search(glob %q) found %+v", glob, h)
			}
		}
	}
	// The rules belong to the restricted Workspace alone.
	if got, err := base.ReadFile("baton.yaml", 0); err != nil || got != "MARK PROTECTED workflow\n" {
		t.Errorf("the unrestricted workspace reads baton.yaml as %q, %v", got, err)
	}
}

func TestRulesReadOnly(t *testing.T) {
	base := protectedTree(t)
	w, err := base.Restrict(Rules{Deny: []string{".baton"}, ReadOnly: []string{"skills", "baton.yaml"}, Write: everything})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, w.Root())
	for _, p := range []string{"skills/x/notes.md", "skl/notes.md", "baton.yaml", "cfg", "sk"} {
		if _, err := w.ReadFile(p, 0); err != nil {
			t.Errorf("ReadFile(%q): %v", p, err)
		}
	}
	for _, p := range []string{"skills/x/notes.md", "skl/notes.md", "skills/new/new.md", "skl/new.md", "baton.yaml", "cfg", "absbaton", "sk"} {
		if err := w.WriteFile(p, []byte("MARK PWNED\n")); !errors.Is(err, ErrProtected) {
			t.Errorf("WriteFile(%q) = %v, want ErrProtected", p, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, w.Root())); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}
	got, err := w.List("skills/**")
	if err != nil || !cmp.Equal(got, []string{"skills/x/SKILL.md", "skills/x/notes.md"}) {
		t.Errorf("List(skills/**) = %q, %v", got, err)
	}
	if err := w.WriteFile("docs/new.md", []byte("fine\n")); err != nil {
		t.Errorf("WriteFile of an unprotected path: %v", err)
	}
}

func TestRestrict(t *testing.T) {
	base := protectedTree(t)
	for _, bad := range []string{"[bad", "", "/abs", "../up", "docs/\x00"} {
		if _, err := base.Restrict(Rules{ReadOnly: []string{bad}}); err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(bad, "\x00", `\x00`)) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Restrict(%q) = %v, want a one-line error naming it", bad, err)
		}
	}
	a, err := base.Restrict(Rules{Deny: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadFile("docs/ok.md", 0); !errors.Is(err, ErrProtected) {
		t.Errorf("docs/ok.md under Deny docs: %v", err)
	}
	// Later rules replace earlier ones, but never open up .git.
	b, err := a.Restrict(Rules{Deny: []string{"baton.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadFile("docs/ok.md", 0); err != nil {
		t.Errorf("docs/ok.md after the rules were replaced: %v", err)
	}
	if _, err := b.ReadFile(".git/config", 0); !errors.Is(err, ErrProtected) {
		t.Errorf(".git/config after the rules were replaced: %v", err)
	}
	// A folder pattern with a trailing slash or ./ covers the same paths.
	c, err := base.Restrict(Rules{Deny: []string{"./docs/"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFile("DOCS/ok.md", 0); !errors.Is(err, ErrProtected) {
		t.Errorf("DOCS/ok.md under Deny ./docs/: %v", err)
	}
}
