package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// tree makes a workspace holding files (path → content, mode 0644) and
// restricts it to the Write patterns given.
func tree(t *testing.T, files map[string]string, write ...string) *Workspace {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if w, err = w.Restrict(Rules{Write: write}); err != nil {
		t.Fatal(err)
	}
	return w
}

// Only declared paths are written, matched as declared, and every other
// write is refused with one line naming the list and how to extend it.
func TestWriteOnlyDeclaredPaths(t *testing.T) {
	w := tree(t, map[string]string{"app/main.go": "package main\n"}, "out/**", "docs/drafts/", "CHANGELOG.md")
	for _, p := range []string{"out/a.md", "out/deep/er/b.md", "docs/drafts/x.md", "CHANGELOG.md"} {
		if err := w.WriteFile(p, []byte("ok\n")); err != nil {
			t.Errorf("WriteFile(%q): %v", p, err)
		}
	}
	for _, p := range []string{"app/main.go", "OUT/a.md", "docs/drafts.md", "docs/x.md", "CHANGELOG.md/x", "changelog.md", "outx/a.md", "CHANGELOG.mdx"} {
		err := w.WriteFile(p, []byte("planted\n"))
		want := "write " + p + ": not a path this workflow may write (writes: out/**, docs/drafts/**, CHANGELOG.md); declare it in baton.yaml's writes: list"
		if err == nil || err.Error() != want {
			t.Errorf("WriteFile(%q) = %v\nwant %s", p, err, want)
		}
		if !errors.Is(err, ErrNotDeclared) || !errors.Is(err, ErrProtected) || !errors.Is(err, writepolicy.ErrDenied) {
			t.Errorf("WriteFile(%q) = %v: want ErrNotDeclared, ErrProtected and writepolicy.ErrDenied", p, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(w.Root(), "app", "main.go")); string(got) != "package main\n" {
		t.Errorf("app/main.go = %q", got)
	}
	for _, p := range []string{"OUT", "changelog.md", "outx"} {
		if _, err := os.Lstat(filepath.Join(w.Root(), p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	none := tree(t, nil)
	want := "write out/a.md: not a path this workflow may write (writes: none); declare it in baton.yaml's writes: list"
	if err := none.WriteFile("out/a.md", nil); err == nil || err.Error() != want {
		t.Errorf("with no patterns: %v, want %s", err, want)
	}
	// The deny-list stays the first line inside declared paths.
	all := tree(t, nil, "**")
	if err := all.WriteFile(".git/config", nil); !errors.Is(err, ErrProtected) || errors.Is(err, ErrNotDeclared) {
		t.Errorf("WriteFile(.git/config) = %v, want the deny-list's refusal", err)
	}
}

func TestRestrictBadWritePatterns(t *testing.T) {
	base := tree(t, nil)
	for _, bad := range []string{"", ".", "/", "/etc/**", "../x/**", "out/../../x", "out/[ab", "a\x00b"} {
		_, err := base.Restrict(Rules{Write: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), "writes pattern") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Restrict(Write: %q) = %v, want a one-line error", bad, err)
		}
	}
}

// A written file is never executable: new files are 0644, an existing
// file keeps its mode without exec bits, and a file with any exec bit is
// not written over.
func TestWriteNeverExecutable(t *testing.T) {
	w := tree(t, map[string]string{"out/private.md": "a", "out/hook": "#!/bin/sh\n", "out/group": "x", "out/other": "x"}, "out/**")
	root := w.Root()
	os.Chmod(filepath.Join(root, "out", "private.md"), 0o600)
	os.Chmod(filepath.Join(root, "out", "hook"), 0o755)
	os.Chmod(filepath.Join(root, "out", "group"), 0o654)
	os.Chmod(filepath.Join(root, "out", "other"), 0o645)
	for p, want := range map[string]os.FileMode{"out/new.sh": 0o644, "out/private.md": 0o600} {
		if err := w.WriteFile(p, []byte("#!/bin/sh\ntouch pwned\n")); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	for _, p := range []string{"out/hook", "out/group", "out/other"} {
		before, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		err := w.WriteFile(p, []byte("touch pwned\n"))
		if !errors.Is(err, ErrExecutable) || !errors.Is(err, ErrProtected) || strings.Contains(err.Error(), "\n") {
			t.Errorf("WriteFile(%q) = %v, want ErrExecutable", p, err)
		}
		if after, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(p))); string(after) != string(before) {
			t.Errorf("%s changed to %q", p, after)
		}
	}
}

// Folders other tools run code from are refused even when declared: a git
// directory (anything holding HEAD, and HEAD itself), another repository
// or worktree, a virtual environment, dependency folders.
func TestWriteRefusesRunnableFolders(t *testing.T) {
	w := tree(t, map[string]string{
		".git/HEAD":            "ref: refs/heads/main\n",
		"vendor/bare/HEAD":     "ref: refs/heads/main\n",
		"vendor/lib/.git":      "gitdir: ../../.git/modules/lib\n",
		"vendor/sub/.git/HEAD": "ref: refs/heads/main\n",
		"tools/env/pyvenv.cfg": "home = /usr/bin\n",
		"docs/readme.md":       "# Docs\n",
	}, "**")
	refused := []string{
		"HEAD", "docs/notes/HEAD", "docs/notes/head", "docs/notes/Head", "docs/HEAD/x",
		"vendor/bare/config", "vendor/bare/objects/ab/cdef", "vendor/bare/refs/heads/main",
		"vendor/lib/run.sh", "vendor/lib/deep/x.md", "vendor/sub/x.md",
		"tools/env/lib/python3.11/x.py", "tools/env/bin/python3",
		"node_modules/.bin/jest", "web/node_modules/x/index.js", "NODE_MODULES/.bin/jest",
		".venv/lib/python3.11/site-packages/zz.pth", "lib/dist-packages/zz.pth", "app/__pycache__/a.cpython-311.pyc",
		"x/pyvenv.cfg",
	}
	for _, p := range refused {
		err := w.WriteFile(p, []byte("[core]\n\tfsmonitor = touch pwned\n"))
		if !errors.Is(err, writepolicy.ErrDenied) || !errors.Is(err, ErrProtected) || strings.Contains(err.Error(), "\n") {
			t.Errorf("WriteFile(%q) = %v, want a one-line refusal", p, err)
		}
		if _, err := os.Lstat(filepath.Join(w.Root(), filepath.FromSlash(p))); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// The workspace's own repository does not stop writes beside it.
	for _, p := range []string{"docs/notes/heads.md", "docs/head.md", "out/a.md"} {
		if err := w.WriteFile(p, []byte("ok\n")); err != nil {
			t.Errorf("WriteFile(%q): %v", p, err)
		}
	}
}

// Paths in git-ignored folders are refused unless a pattern names the
// folder by its literal segments; the rules come from the .gitignore files
// on the path and .git/info/exclude. An ignored file is not a folder and
// is written as any other.
func TestWriteGitIgnored(t *testing.T) {
	files := map[string]string{
		".gitignore":          "# build output\nbuild/\n*.log\n*.d\n!keep.d\n/tmp\nspaced\\ \n{a,b}.e\ncache/**\n",
		"docs/.gitignore":     "drafts/\n!/tmp\n",
		".git/info/exclude":   "local/\n",
		"docs/guide.md":       "# Guide\n",
		"build/existing.txt":  "x",
		"web/build/bundle.js": "x",
	}
	all := tree(t, files, "**")
	for _, tt := range []struct{ path, ignored string }{
		{"build/x.txt", "build"},
		{"web/build/bundle.js", "web/build"},
		{"logs.d/x", "logs.d"},
		{"docs/deep.d/b", "docs/deep.d"},
		{"tmp/x", "tmp"},
		{"docs/drafts/x.md", "docs/drafts"},
		{"local/notes.md", "local"},
		{"cache/x", "cache"},
		{"{a,b}.e/x", "{a,b}.e"},
		{"spaced /x", "spaced "},
	} {
		err := all.WriteFile(tt.path, []byte("x"))
		want := "write " + tt.path + ": in a git-ignored folder (git ignores " + tt.ignored + "), so a change there never shows in git diff; declare the folder by name in baton.yaml's writes: list (" + tt.ignored + "/**) to write there"
		if !errors.Is(err, ErrIgnored) || !errors.Is(err, ErrProtected) || err.Error() != want {
			t.Errorf("WriteFile(%q) = %v\nwant %s", tt.path, err, want)
		}
	}
	for _, p := range []string{"a.log", "keep.d/x", "docs/tmp/x", "docs/build.md", "a.e/x", "buildx/y", "docs/guide.md", "spaced/x", "x.d"} {
		if err := all.WriteFile(p, []byte("x")); err != nil {
			t.Errorf("WriteFile(%q): %v", p, err)
		}
	}
	// Named by its literal folders, an ignored folder may be written.
	named := tree(t, files, "build/**", "docs/drafts/*.md", "local/", "logs.d/**", "**/*.md")
	for _, p := range []string{"build/x.txt", "build/deep/y.txt", "docs/drafts/x.md", "local/a", "logs.d/x", "docs/new.md"} {
		if err := named.WriteFile(p, []byte("x")); err != nil {
			t.Errorf("declared WriteFile(%q): %v", p, err)
		}
	}
	if err := named.WriteFile("tmp/y.md", []byte("x")); !errors.Is(err, ErrIgnored) {
		t.Errorf("WriteFile(tmp/y.md) under **/*.md = %v, want ErrIgnored", err)
	}
}

func TestParseIgnore(t *testing.T) {
	got := parseIgnore([]byte("# c\n\n!/a/b/\n  \nx\\ \ny  \n\\#z\n/\n**/q/**\n"), "d")
	want := []ignoreRule{
		{base: "d", glob: "a/b", negate: true, dirOnly: true, anchored: true},
		{base: "d", glob: "x\\ "},
		{base: "d", glob: "y"},
		{base: "d", glob: "\\#z"},
		{base: "d", glob: "**/q/**", anchored: true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ignoreRule{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Any ignore file and any path: no panic, and a path reported ignored is
// a prefix of the path asked about.
func FuzzIgnored(f *testing.F) {
	f.Add("build/\n*.log\n!keep.log\n/tmp\n", "build/x.txt")
	f.Add("{a,b}\n\\!x\n**/q/**\n[z-a]\n", "q/r/s")
	f.Add("a\\\n\\\n/\n!\n", "a/b")
	f.Fuzz(func(t *testing.T, rules, p string) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte(rules), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := New(root)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		clean, err := cleanPath(p)
		if err != nil || clean == "." {
			return
		}
		got := w.ignored(clean)
		if got != "" && got != clean && !strings.HasPrefix(clean, got+"/") {
			t.Fatalf("ignored(%q) = %q, not a prefix", clean, got)
		}
	})
}
