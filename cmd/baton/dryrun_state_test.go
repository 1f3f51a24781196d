package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Defect: run --dry-run accepted a state.yaml with a duplicate key that
// run then refused. Both now fail with the same one line and exit 1, and
// the dry run says what it checked when it passes.
func TestRunDryRunRefusesAStateTheRunRefuses(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	wf := filepath.Join(ws, "baton.yaml")
	code, out, _ := runBaton(t, "", "run", "--dry-run", "--workflow", wf)
	if code != exitOK || !strings.Contains(out, "Checked as a run checks them: specs/state.yaml, specs/ledger.md and the skills.") {
		t.Fatalf("clean dry run: exit %d, stdout:\n%s", code, out)
	}
	state := filepath.Join(ws, "specs", "state.yaml")
	if err := os.WriteFile(state, []byte("owner: a\nowner: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dryCode, dryOut, dryErr := runBaton(t, "", "run", "--dry-run", "--workflow", wf)
	runCode, _, runErr := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", "exit 7")
	if runCode != 1 || !strings.Contains(runErr, `mapping key "owner" already defined`) {
		t.Fatalf("run: exit %d, stderr %q", runCode, runErr)
	}
	last := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		return lines[len(lines)-1]
	}
	if dryCode != 1 || strings.Count(strings.TrimSpace(dryErr), "\n") != 0 || last(dryErr) != last(runErr) || dryOut != "" {
		t.Errorf("dry run: exit %d, stdout %q, stderr %q; want exit 1 and the run's line %q", dryCode, dryOut, dryErr, last(runErr))
	}
}
