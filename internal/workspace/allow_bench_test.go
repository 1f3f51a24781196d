package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/testdep"
)

// benchTree is a workspace with a root .gitignore of 60 rules and one in
// each of the 4 folders on the written path, the shape of a real project.
func benchTree(b *testing.B) *Workspace {
	b.Helper()
	var rules strings.Builder
	for i := range 60 {
		fmt.Fprintf(&rules, "/gen%d/\n*.tmp%d\n", i, i)
	}
	files := map[string]string{".gitignore": rules.String(), "a/b/c/d/keep.md": "x"}
	for _, d := range []string{"a", "a/b", "a/b/c", "a/b/c/d"} {
		files[d+"/.gitignore"] = "*.o\n!keep.o\nbuild/\n"
	}
	root := b.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	w, err := New(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	if w, err = w.Restrict(Rules{Write: everything}); err != nil {
		b.Fatal(err)
	}
	return w
}

// The checks a declared write pays before it writes: the allow-list, the
// git-ignore rules on the path, the folder markers.
func BenchmarkCheckDeclared(b *testing.B) {
	w := benchTree(b)
	for b.Loop() {
		if err := w.checkDeclared("a/b/c/d/notes.md", "a/b/c/d/notes.md"); err != nil {
			b.Fatal(err)
		}
	}
}

// The whole WriteFile of a small file, for scale.
func BenchmarkWriteFileDeclared(b *testing.B) {
	w := benchTree(b)
	for b.Loop() {
		if err := w.WriteFile("a/b/c/d/notes.md", []byte("# Notes\n")); err != nil {
			b.Fatal(err)
		}
	}
}

// What asking git instead would cost per write: one git check-ignore with
// the repository's configuration defused, the other way to tell.
func BenchmarkGitCheckIgnore(b *testing.B) {
	git := testdep.LookPath(b, "git")
	w := benchTree(b)
	if out, err := exec.Command(git, "-C", w.Root(), "init", "-q").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	for b.Loop() {
		cmd := exec.Command(git, "-c", "core.fsmonitor=false", "-c", "core.hooksPath="+os.DevNull, "check-ignore", "-q", "a/b/c/d/notes.md")
		cmd.Dir = w.Root()
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if err := cmd.Run(); err == nil {
			b.Fatal("git says the path is ignored")
		}
	}
}
