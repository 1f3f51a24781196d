package runner_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// A run leaves no lock files in the user's tree: git status after a run
// shows the run's work, not baton's bookkeeping. (.baton/ is baton's own
// folder and holds the workspace's run lock by design.)
func TestRunLeavesNoLockFilesInTheWorkspace(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // keep the test's lock files out of the user's cache
	dir := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == ".baton" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(d.Name(), ".lock") {
			t.Errorf("lock file %s left in the workspace", filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The acceptance as a user checks it: in a git repository holding the
// workspace, `git status` after a run shows only what the steps wrote — no
// lock file, nothing of baton's own .baton folder.
func TestGitStatusAfterRunShowsOnlyTheStepsWork(t *testing.T) {
	git := testdep.LookPath(t, "git")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := copyExample(t)
	gitRun := func(args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gitRun("init", "-q")
	gitRun("add", "-A")
	gitRun("commit", "-qm", "before")
	s := llmtest.NewServer(t, script(true))
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(gitRun("status", "--porcelain", "--untracked-files=all")), "\n") {
		if strings.Contains(line, ".lock") || strings.Contains(line, ".baton") {
			t.Errorf("git status shows %q", line)
		}
	}
}
