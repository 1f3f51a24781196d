package writepolicy_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// Names other tools run code from are refused for writing wherever they
// appear, in any spelling, and stay readable.
func TestWriteOnlyFamilies(t *testing.T) {
	for fam, paths := range map[writepolicy.Family][]string{
		writepolicy.GitDir: {"HEAD", "docs/notes/HEAD", "docs/notes/head", "HEAD.", "H\u200cEAD", "docs/HEAD/x"},
		writepolicy.Dependency: {
			"node_modules/.bin/jest", "web/Node_Modules/x.js", "NODE_M~1/.bin/jest",
			".venv/lib/python3.11/site-packages/zz.pth", "lib/dist-packages/zz.pth",
			"app/__pycache__/a.cpython-311.pyc", "env/pyvenv.cfg", "SITE-P~1/zz.pth",
		},
	} {
		for _, p := range paths {
			f, ok := writepolicy.WriteFamily(p)
			if !ok || f != fam {
				t.Errorf("WriteFamily(%q) = %q, %v; want %q", p, f, ok, fam)
			}
			if err := writepolicy.CheckReadPath(p); err != nil {
				t.Errorf("CheckReadPath(%q) = %v, want readable", p, err)
			}
		}
	}
	for _, p := range []string{"docs/head.md", "heads/x", "node_modules.md", "site-packages.txt", "docs/venv.md"} {
		if f, ok := writepolicy.WriteFamily(p); ok {
			t.Errorf("WriteFamily(%q) = %q, want allowed", p, f)
		}
	}
}

// On disk: a folder holding HEAD, a .git of its own (below the root) or a
// pyvenv.cfg refuses every write into it or below it.
func TestCheckWriteRefusesRunnableFolders(t *testing.T) {
	root := t.TempDir()
	for p, body := range map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		"bare/HEAD":          "ref: refs/heads/main\n",
		"mod/.git":           "gitdir: ../.git/modules/mod\n",
		"env/pyvenv.cfg":     "home = /usr/bin\n",
		"docs/guide.md":      "# Guide\n",
		"nested/sub/.git/HE": "x",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"bare/config", "bare/objects/ab/cd", "mod/run.sh", "mod/a/b.md", "env/lib/x.py", "nested/sub/x.md"} {
		err := writepolicy.CheckWrite(root, p)
		var fe *writepolicy.FolderError
		if !errors.Is(err, writepolicy.ErrDenied) || !errors.As(err, &fe) {
			t.Errorf("CheckWrite(%q) = %v, want a FolderError", p, err)
		}
	}
	for _, p := range []string{"docs/new.md", "out/a/b.md", "bareish/x", "nested/x.md"} {
		if err := writepolicy.CheckWrite(root, p); err != nil {
			t.Errorf("CheckWrite(%q) = %v, want allowed", p, err)
		}
	}
}
