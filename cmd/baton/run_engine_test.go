package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// --engine is checked before anything runs: an unknown engine, dbos with
// no database, and dbos with an agent command are one line each, and the
// fake is sent nothing.
func TestRunEngineFlagIsChecked(t *testing.T) {
	isolateEnv(t)
	t.Setenv("BATON_DATABASE_URL", "")
	dir := exampleWorkspace(t)
	wf := filepath.Join(dir, "baton.yaml")
	s := llmtest.NewServer(t, finishing())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--engine", "temporal"}, `--engine must be local or dbos, not "temporal"`},
		{[]string{"run", "--engine", "dbos"}, "no database: give --database-url URL or set BATON_DATABASE_URL"},
		{[]string{"resume", "--engine", "dbos"}, "no database: give --database-url URL or set BATON_DATABASE_URL"},
		{[]string{"run", "--engine", "dbos", "--database-url", "postgres://x/y", "--agent-cmd", "true"}, "--engine dbos records a step's model and tool calls"},
	} {
		args := append(tc.args, "--workflow", wf, "--provider", "openai", "--base-url", s.OpenAIBaseURL())
		code, _, errOut := runBaton(t, "", args...)
		if code == exitOK || !strings.Contains(errOut, tc.want) {
			t.Errorf("baton %s: exit %d, stderr %q; want it refused with %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("the refused runs sent %d requests", n)
	}
	if _, err := os.Stat(filepath.Join(dir, ".baton", "runs")); err == nil {
		t.Errorf("a refused run left a run folder")
	}
}

// The workflow's agent_cmd is refused with --engine dbos as the flag is,
// with a usage error and before anything is said about the run.
func TestRunEngineRefusesTheWorkflowsAgentCmd(t *testing.T) {
	isolateEnv(t)
	dir := exampleWorkspace(t)
	wf := filepath.Join(dir, "baton.yaml")
	yml, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, append(yml, []byte("agent_cmd: \"true\"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--engine", "dbos", "--database-url", "postgres://x/y")
	want := "--engine dbos records a step's model and tool calls; a step run by an agent command makes none that baton sees"
	if code != exitUsage || strings.TrimSpace(errOut) != "baton: "+want {
		t.Errorf("exit %d, stderr %q; want a usage error, the one line %q", code, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".baton", "runs")); err == nil {
		t.Errorf("a refused run left a run folder")
	}
}

// A dry run calls no model and records nothing: --engine dbos needs no
// database for it.
func TestRunDryRunNeedsNoDatabase(t *testing.T) {
	isolateEnv(t)
	t.Setenv("BATON_DATABASE_URL", "")
	wf := filepath.Join(exampleWorkspace(t), "baton.yaml")
	code, out, errOut := runBaton(t, "", "run", "--dry-run", "--engine", "dbos", "--workflow", wf)
	if code != exitOK || !strings.Contains(out, "No model was called") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the dry run's plan", code, out, errOut)
	}
}
