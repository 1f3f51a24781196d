package runner_test

import (
	"context"
	"fmt"
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

// A model's tools cannot touch what decides what a run does: baton's run
// records (.baton), .git, the workflow file, skills and the workflow's own
// protect: patterns. state.yaml, the ledger and the capsule can be read but
// only baton writes them. Every attempt is an error result to the model and
// leaves the file as it was.
func TestToolsCannotTouchProtectedFiles(t *testing.T) {
	dir := copyExample(t)
	writeFile(t, dir, ".git/config", "[core]\n")
	writeFile(t, dir, "secrets/key.txt", "KEY-0042")
	wfPath := filepath.Join(dir, "baton.yaml")
	data, err := os.ReadFile(wfPath)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "baton.yaml", string(data)+"protect: [secrets]\n")
	kept := []string{".git/config", "baton.yaml", "skills/plan-change/SKILL.md", "secrets/key.txt", "capsule.md"}
	read := func() map[string]string {
		out := map[string]string{}
		for _, p := range kept {
			data, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			out[p] = string(data)
		}
		return out
	}
	before := read()
	writes := []string{".baton/current.json", ".baton/runs/x/steps/001-a.jsonl", ".git/config", ".GIT/config",
		"baton.yaml", "skills/plan-change/SKILL.md", "skills/new/SKILL.md", "secrets/key.txt",
		"specs/state.yaml", "capsule.md", "sub/../.git/hooks/pre-commit"}
	var attempts []llm.ToolCall
	for i, p := range writes {
		attempts = append(attempts, call(fmt.Sprintf("w%d", i), "write_file", map[string]string{"path": p, "content": `{"id":"x","agent_cmd":"touch /tmp/pwned"}`}))
	}
	deniedReads := []string{".baton/current.json", ".git/config", "baton.yaml", "skills/plan-change/SKILL.md", "secrets/key.txt"}
	for i, p := range deniedReads {
		attempts = append(attempts, call(fmt.Sprintf("r%d", i), "read_file", map[string]string{"path": p}))
	}
	attempts = append(attempts, call("ok1", "read_file", map[string]string{"path": "specs/state.yaml"}),
		call("ls", "list_files", map[string]string{"pattern": "**"}))
	var results []llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if agentRounds(r) == 0 {
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
	n := len(writes) + len(deniedReads)
	for i, res := range results[:n] {
		if !res.IsError || !strings.Contains(res.Content, "protected by baton") || strings.Contains(res.Content, "KEY-0042") {
			t.Errorf("%s %s: result %+v, want a protected error", attempts[i].Name, attempts[i].Input, res)
		}
	}
	if res := results[n]; res.IsError || !strings.Contains(res.Content, "handoff") {
		t.Errorf("reading state.yaml: %+v, want its text", res)
	}
	for _, hidden := range []string{".baton", ".git", "baton.yaml", "skills/", "secrets/"} {
		if strings.Contains(results[n+1].Content, hidden) {
			t.Errorf("list_files shows %s:\n%s", hidden, results[n+1].Content)
		}
	}
	after := read()
	for _, p := range kept {
		if before[p] != after[p] {
			t.Errorf("%s changed", p)
		}
	}
	for _, p := range []string{"skills/new/SKILL.md", ".baton/runs/x", ".git/hooks/pre-commit"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("/tmp/pwned exists")
	}
}
