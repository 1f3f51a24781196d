package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// Tool paths that leave the workspace are refused with an error result the
// model sees, and nothing outside is read or written.
func TestToolPathsAreConfinedToTheWorkspace(t *testing.T) {
	dir := copyExample(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-4711"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, secret)
	attempts := []llm.ToolCall{
		call("a1", "read_file", map[string]string{"path": rel}),
		call("a2", "read_file", map[string]string{"path": secret}),
		call("a3", "read_file", map[string]string{"path": "escape/secret.txt"}),
		call("a4", "write_file", map[string]string{"path": "escape/planted.txt", "content": "x"}),
		call("a5", "write_file", map[string]string{"path": "../planted.txt", "content": "x"}),
		call("a6", "list_files", map[string]string{"pattern": "escape/*"}),
	}
	var results []llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch agentRounds(r) {
		case 0:
			return llmtest.CallTools(attempts...)
		default:
			if results == nil {
				results = r.ToolResults()
			}
			return llmtest.Text("REPORT: done")
		}
	})
	s := llmtest.NewServer(t, rule)
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(attempts) {
		t.Fatalf("results = %d, want %d", len(results), len(attempts))
	}
	for i, res := range results[:5] {
		if !res.IsError || strings.Contains(res.Content, "TOP-SECRET") {
			t.Errorf("call %s: result %+v, want an error without the secret", attempts[i].Input, res)
		}
	}
	if strings.Contains(results[5].Content, "secret.txt") {
		t.Errorf("list_files followed a symlink out: %q", results[5].Content)
	}
	for _, p := range []string{filepath.Join(outside, "planted.txt"), filepath.Join(filepath.Dir(dir), "planted.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a file was written outside the workspace: %s", p)
		}
	}
	if data, _ := os.ReadFile(secret); string(data) != "TOP-SECRET-4711" {
		t.Error("the outside file changed")
	}
}
