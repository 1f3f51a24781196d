package runner_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

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
