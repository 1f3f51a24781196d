package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/testws"
	"github.com/baton-dev/baton/llm/llmtest"
)

// exampleWorkspace copies the shipped example workflow to a temp folder.
func exampleWorkspace(t *testing.T) string { return testws.Copy(t, "../../examples/workflow") }

// finishing is an agent that ends every step at once.
func finishing() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: all phases done")
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	})
}

func TestRunDryRun(t *testing.T) {
	isolateEnv(t)
	dir := exampleWorkspace(t)
	code, out, errOut := runBaton(t, "", "run", "--dry-run", "--workflow", filepath.Join(dir, "baton.yaml"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"No model was called", "reset at 130000 tokens", "skill analyse-request: fresh context", "skill write-report", "docs/requirements.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".baton")); err == nil {
		t.Error("a dry run wrote .baton")
	}
}

func TestRunResumeAndLintThroughTheCLI(t *testing.T) {
	isolateEnv(t)
	dir := exampleWorkspace(t)
	s := llmtest.NewServer(t, finishing())
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	wf := filepath.Join(dir, "baton.yaml")

	code, _, errOut := runBaton(t, "", "resume", "--workflow", wf)
	if code != exitError || !strings.Contains(errOut, "no unfinished run") {
		t.Fatalf("resume with nothing to resume: exit %d, %q", code, errOut)
	}
	code, out, errOut := runBaton(t, "", "run", "--workflow", wf)
	if code != exitOK || strings.TrimSpace(out) != "REPORT: all phases done" {
		t.Fatalf("run: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "events.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("run logs: %v", runs)
	}
	id := filepath.Base(filepath.Dir(runs[0]))
	code, out, errOut = runBaton(t, "", "ledger", "lint", "--run", id, "--workspace", dir)
	if code != exitOK {
		t.Errorf("lint of a clean run: exit %d\n%s%s", code, out, errOut)
	}
}

func TestRunRefusesMalformedInputs(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, finishing())
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	cases := []struct {
		name, file, content, want string
	}{
		{"workflow", "baton.yaml", "name: x\nthreshold_fraction: 1.5\ncapsule: capsule.md\nphases: [{name: a, skill: analyse-request}]\n", "threshold_fraction"},
		{"workflow yaml", "baton.yaml", "name: [unclosed\n", "baton.yaml"},
		{"state", "specs/state.yaml", "handoff:\n\tnext_skill: x\n", "state.yaml"},
		{"ledger", "specs/ledger.md", "## Ledger — analysis — not-a-time\n\n### Frozen decisions\n- x\n", "ledger"},
		{"skill", "skills/plan-change/SKILL.md", "no frontmatter here\n", "SKILL.md"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := exampleWorkspace(t)
			p := filepath.Join(dir, tc.file)
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			state0, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml"))
			before := s.Count()
			code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"))
			if code == exitOK || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want a one-line error naming %s", code, errOut, tc.want)
			}
			if s.Count() != before {
				t.Error("a model was called despite the malformed input")
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml")); string(after) != string(state0) {
				t.Error("state.yaml was overwritten")
			}
			if got, _ := os.ReadFile(p); string(got) != tc.content {
				t.Errorf("%s was overwritten", tc.file)
			}
		})
	}
}
