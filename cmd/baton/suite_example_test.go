package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/testws"
	"github.com/baton-dev/baton/state"
)

// copyTree copies src into a fresh folder, leaving out any .baton.
func copyTree(t *testing.T, src string) string { return testws.Copy(t, src) }

// suiteOwned are the state.yaml keys baton (or the agent, for the handoff)
// may write in the suite example; every other line is the team's.
var suiteOwned = []string{
	"handoff.next_skill", "handoff.last_step_completed", "handoff.open_decisions",
	"handoff.required_reading", "handoff.context", "handoff.decisions",
	"suite_cycle", "metrics",
}

// withoutOwned drops the lines of the owned keys (a key's line and every
// line indented below it) and keeps every other line byte for byte, so
// that two versions of a file can be compared on what is not owned.
func withoutOwned(text string, owned []string) string {
	type open struct {
		indent int
		key    string
	}
	var stack []open
	var b strings.Builder
	dropBelow := -1 // indentation of the owned key being dropped
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		content := strings.TrimSpace(trimmed) != "" && !strings.HasPrefix(trimmed, "#")
		if dropBelow >= 0 {
			if !content && strings.TrimSpace(line) != "" && indent > dropBelow {
				continue // a comment inside the owned value
			}
			if content && (indent > dropBelow || (indent == dropBelow && strings.HasPrefix(trimmed, "- "))) {
				continue
			}
			if content {
				dropBelow = -1
			}
		}
		if content {
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			key, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "- "), ":")
			path := key
			if len(stack) > 0 {
				path = stack[len(stack)-1].key + "." + key
			}
			stack = append(stack, open{indent, path})
			for _, o := range owned {
				if path == o {
					dropBelow = indent
				}
			}
			if dropBelow >= 0 {
				continue
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// The suite example runs end to end under --agent-cmd with a scripted agent
// that keeps the cockpit by hand, as the suite's skills tell it to: every
// step of its chain runs in order (including the one only the agent's own
// next_skill reaches), the team's lines of state.yaml are byte-identical
// afterwards, and completed_steps grows as one comma-separated string.
func TestSuiteExampleEndToEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent is a POSIX sh script")
	}
	isolateEnv(t)
	ws, logDir := copyTree(t, filepath.Join("..", "..", "examples", "suite")), t.TempDir()
	agentScript, err := filepath.Abs(filepath.Join("testdata", "suite", "agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(ws, "specs", "state.yaml")
	before, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	agent := "SUITE_LOG='" + logDir + "' sh '" + agentScript + "'"
	code, out, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(ws, "baton.yaml"), "--agent-cmd", agent)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if strings.TrimSpace(out) != "Added the DT-311 entry to CHANGELOG.md." {
		t.Errorf("stdout %q, want the last step's summary", out)
	}
	if strings.Contains(errOut, "warning:") {
		t.Errorf("the run warned:\n%s", errOut)
	}
	calls, err := os.ReadFile(filepath.Join(logDir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := "1 frame-problem\n2 map-code\n3 design-fix\n4 write-fix\n5 review-fix\n6 release-notes\n"
	if string(calls) != wantCalls {
		t.Errorf("the agent ran:\n%swant:\n%s", calls, wantCalls)
	}
	for _, artifact := range []string{"specs/problem.md", "specs/code-map.md", "specs/design.md", "specs/review.md"} {
		if _, err := os.Stat(filepath.Join(ws, artifact)); err != nil {
			t.Errorf("artifact %s: %v", artifact, err)
		}
	}

	after, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := withoutOwned(string(after), suiteOwned), withoutOwned(string(before), suiteOwned); got != want {
		t.Errorf("the team's lines of state.yaml changed:\n%s\nwant:\n%s", got, want)
	}
	steps := "frame-problem, map-code, design-fix, write-fix, review-fix, release-notes"
	if !strings.Contains(string(after), "  completed_steps: \""+steps+"\"   # comma-separated, in the order the steps ran\n") {
		t.Errorf("completed_steps did not grow as a string with its comment:\n%s", after)
	}
	checkSuiteHandoff(t, statePath, string(after), steps)

	checkSuiteStepInputs(t, logDir)

	// The run leaves a log the ledger linter accepts.
	runs, _ := os.ReadDir(filepath.Join(ws, ".baton", "runs"))
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	if code, out, errOut := runBaton(t, "", "ledger", "lint", "--workspace", ws, "--run", runs[0].Name()); code != exitOK {
		t.Errorf("ledger lint: exit %d\n%s%s", code, out, errOut)
	}
}

// checkSuiteHandoff: the handoff the agent and its blocks wrote survives
// in state.yaml, the completed steps a string in the file's own style.
func checkSuiteHandoff(t *testing.T, statePath, after, steps string) {
	t.Helper()
	f, err := state.Load(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Get("suite_cycle", "completed_steps"); v != steps {
		t.Errorf("completed_steps reads %#v, want the string %q", v, steps)
	}
	h := f.Handoff()
	if h.NextSkill != "done" || h.LastStepCompleted != "release-notes: Added the DT-311 entry to CHANGELOG.md.\n" ||
		!strings.Contains(after, "  last_step_completed: |\n    release-notes: ") {
		t.Errorf("handoff after the run: next_skill %q, last_step_completed %q", h.NextSkill, h.LastStepCompleted)
	}
	if len(h.Decisions) != 1 || h.Decisions[0].Skill != "design-fix" || h.Decisions[0].Evidence != "specs/design.md:3" {
		t.Errorf("decisions %+v, want design-fix's one decision from its handoff block", h.Decisions)
	}
	if h.Context != "csvsum crashes on a blank line; see specs/problem.md" || len(h.OpenDecisions) != 1 || len(h.RequiredReading) != 1 {
		t.Errorf("the handoff fields the agent and its blocks wrote did not all survive: %+v", h)
	}
}

// checkSuiteStepInputs: what travels between steps is the state file as
// the agent left it: the step after a direct edit sees the agent's own
// summary, the step after a block sees the block's summary written in the
// file's style.
func checkSuiteStepInputs(t *testing.T, logDir string) {
	t.Helper()
	for _, c := range []struct{ step, want string }{
		{"2", "  last_step_completed: |\n    frame-problem: wrote specs/problem.md.\n    The fix must keep the one-number output (docs/issue.md:12).\n"},
		{"3", "  last_step_completed: |\n    map-code: Mapped the reading loop: src/csvsum.py:8 sends every line to float().\n    No test has a blank line (tests/test_csvsum.py:11).\n"},
		{"5", "  completed_steps: \"frame-problem, map-code, design-fix, write-fix\""},
		{"6", "  next_skill: release-notes\n"},
	} {
		in, err := os.ReadFile(filepath.Join(logDir, "input-"+c.step+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(in), c.want) {
			t.Errorf("step %s's input lacks %q", c.step, c.want)
		}
	}
}

// The suite's skills sit two levels down (skills/<group>/<skill>); the
// dry run finds them all and walks the default chain.
func TestSuiteExampleDryRun(t *testing.T) {
	isolateEnv(t)
	code, out, errOut := runBaton(t, "", "run", "--dry-run", "--workflow", filepath.Join("..", "..", "examples", "suite", "baton.yaml"))
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"1. phase discover, skill frame-problem", "2. phase discover, skill map-code", "3. phase build, skill design-fix", "5. phase ship, skill review-fix"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}

func TestWithoutOwned(t *testing.T) {
	in := "a: 1\nhandoff:\n  next_skill: x   # c\n  last_step_completed: |\n    one\n    two\n  team: ours\n  open_decisions:\n  - q\nsuite_cycle:\n  current_step: y\n# tail\nb: 2\n"
	want := "a: 1\nhandoff:\n  team: ours\n# tail\nb: 2\n"
	if got := withoutOwned(in, suiteOwned); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
