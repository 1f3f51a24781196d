package runner_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/runner"
)

// A workflow whose skill names itself as its next step is walked up to
// max_steps, as a real run would be stopped, and the dry run says so.
func TestDryRunStopsAtMaxSteps(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "capsule.md", "the task\n")
	writeFile(t, dir, "skills/again/SKILL.md", "---\nname: again\ndescription: Runs itself again.\nmetadata:\n  next-skill: again\n---\nDo it again.\n")
	writeFile(t, dir, "baton.yaml", "name: loop\ncapsule: capsule.md\nskills: [skills]\nmax_steps: 3\nphases:\n  - {name: p, skill: again}\n")
	p, err := runner.DryRun(load(t, dir), "m")
	if err == nil || !strings.Contains(err.Error(), "within 3 steps (max_steps)") {
		t.Fatalf("err = %v, want the walk stopped at max_steps", err)
	}
	if p == nil || len(p.Steps) != 3 {
		t.Fatalf("plan = %+v, want 3 steps", p)
	}
}
