package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/runner"
)

// Defect: --dry-run accepted a state.yaml with a duplicate key that the
// real run then refused. The dry run reads state.yaml, the ledger and the
// skills exactly as a run does, and fails with the same line.
func TestDryRunRefusesWhatARunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"duplicate key in state.yaml", "specs/state.yaml", "handoff:\n  next_skill: a\n  next_skill: b\n", `mapping key "next_skill" already defined`},
		{"state.yaml is a list", "specs/state.yaml", "- one\n- two\n", "top level is not a mapping"},
		{"ledger heading without a time", "specs/ledger.md", "# Ledger\n\n## Ledger — verify — yesterday evening\n\n### Current phase\nverify\n", "fix it by hand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyExample(t)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(tc.file)), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			wf := load(t, dir)
			_, runErr := runner.Run(context.Background(), runner.Config{Workflow: wf, AgentCmd: "exit 7"})
			if runErr == nil || !strings.Contains(runErr.Error(), tc.want) {
				t.Fatalf("the run's error = %v, want one naming %q", runErr, tc.want)
			}
			_, dryErr := runner.DryRun(wf, "m")
			if dryErr == nil || dryErr.Error() != runErr.Error() {
				t.Errorf("dry run: %v\nwant the run's error: %v", dryErr, runErr)
			}
		})
	}
}
