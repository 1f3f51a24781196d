package batondir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/testdep"
)

func TestEnsureWritesIgnoreOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), Name)
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil || !strings.Contains(string(b), "\n*\n") {
		t.Fatalf("gitignore = %q, %v", b, err)
	}
	// The user's own ignore file is never replaced.
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("runs/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(b) != "runs/\n" {
		t.Errorf("user's gitignore replaced: %q", b)
	}
}

func TestEnsureForFindsTheFolder(t *testing.T) {
	root := t.TempDir()
	if err := EnsureFor(filepath.Join(root, Name, "runs")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, Name, ".gitignore")); err != nil {
		t.Error(err)
	}
	other := filepath.Join(root, "records")
	if err := EnsureFor(other); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other, ".gitignore")); err == nil {
		t.Error("a runs dir outside .baton got an ignore file")
	}
}

// What the file is for: git sees nothing in the folder.
func TestGitStatusShowsNothing(t *testing.T) {
	git := testdep.LookPath(t, "git")
	root := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q")
	dir := filepath.Join(root, Name)
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run("status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git status shows:\n%s", out)
	}
}
