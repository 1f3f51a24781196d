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

// A workflow that declares no writes: lets its steps write out/** and
// nothing else; the refusal is one line naming the list and how to extend
// it. state.yaml and the ledger are still written by baton's own tools.
func TestDefaultWritesAreTheOutputsFolder(t *testing.T) {
	dir := copyExample(t)
	wf := filepath.Join(dir, "baton.yaml")
	yml, _ := os.ReadFile(wf)
	trimmed := strings.Replace(string(yml), "writes: [specs/**, app/**, CHANGELOG.md]\n", "", 1)
	if trimmed == string(yml) {
		t.Fatal("the example declares no writes: line to remove")
	}
	writeFile(t, dir, "baton.yaml", trimmed)
	greet, err := os.ReadFile(filepath.Join(dir, "app", "greet.py"))
	if err != nil {
		t.Fatal(err)
	}
	attempts := []llm.ToolCall{
		call("w1", "write_file", map[string]string{"path": "out/report.md", "content": "# Report\n"}),
		call("w2", "write_file", map[string]string{"path": "app/greet.py", "content": "print('pwned')\n"}),
		call("w3", "update_state", map[string]any{"context": "analysed"}),
		// The same content as the file holds: still refused, not "wrote".
		call("w4", "write_file", map[string]string{"path": "app/greet.py", "content": string(greet)}),
	}
	var results []llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if agentRounds(r) == 0 && results == nil {
			return llmtest.CallTools(attempts...)
		}
		if results == nil {
			results = r.ToolResults()
		}
		return llmtest.Text("REPORT: done")
	})
	s := llmtest.NewServer(t, rule)
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(attempts) {
		t.Fatalf("results = %d, want %d", len(results), len(attempts))
	}
	if results[0].IsError {
		t.Errorf("out/report.md: %s", results[0].Content)
	}
	want := "write app/greet.py: not a path this workflow may write (writes: out/**); declare it in baton.yaml's writes: list"
	if !results[1].IsError || results[1].Content != want {
		t.Errorf("app/greet.py: %+v\nwant %s", results[1], want)
	}
	if results[2].IsError {
		t.Errorf("update_state: %s", results[2].Content)
	}
	if !results[3].IsError || results[3].Content != want {
		t.Errorf("app/greet.py with its own content: %+v\nwant %s", results[3], want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out", "report.md")); string(got) != "# Report\n" {
		t.Errorf("out/report.md = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app", "greet.py")); strings.Contains(string(got), "pwned") {
		t.Error("app/greet.py was written")
	}
	if st, _ := os.ReadFile(filepath.Join(dir, "specs", "state.yaml")); !strings.Contains(string(st), "analysed") {
		t.Errorf("state.yaml lacks the update:\n%s", st)
	}
}
