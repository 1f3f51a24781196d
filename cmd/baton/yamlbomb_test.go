package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/bounded"
)

// runBounded runs baton under a 10 s hang guard and reports the time and
// bytes allocated.
func runBounded(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	elapsed, alloc := bounded.Measure(t, 10*time.Second, func() { code, out, errOut = runBaton(t, "", args...) })
	t.Logf("baton %s: exit %d in %v, %d MB allocated; stderr %q", args[0], code, elapsed, alloc>>20, errOut)
	if alloc > 100<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
	return code, out, errOut
}

func oneErrorLine(t *testing.T, code int, errOut string) {
	t.Helper()
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(errOut, "aliases") {
		t.Errorf("stderr is not one line about aliases:\n%s", errOut)
	}
}

func TestSkillsValidateAliasBomb(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "bomb", bounded.SkillMD("bomb"))
	code, out, errOut := runBounded(t, "skills", "validate", dir)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	// validate reports on stdout: the problem, then the summary.
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "aliases expand") || errOut != "" {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

func TestAskAliasBombSkill(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	writeTestSkill(t, dir, "bomb", bounded.SkillMD("bomb"))
	doc := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(doc, []byte("# Doc\n\nSome text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runBounded(t, "ask", "--runs-dir", t.TempDir(), "--skills", dir, "--dry-run", "--doc", doc, "Summarise")
	oneErrorLine(t, code, errOut)
}

func TestRunDryRunAliasBombSkill(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	writeTestSkill(t, filepath.Join(ws, "skills"), "bomb", bounded.SkillMD("bomb"))
	code, _, errOut := runBounded(t, "run", "--dry-run", "--workflow", filepath.Join(ws, "baton.yaml"))
	oneErrorLine(t, code, errOut)
}

func TestRunDryRunAliasBombWorkflow(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	var b strings.Builder
	b.WriteString("name: bomb\ncapsule: capsule.md\nphases: [{name: a, skill: analyse-request}]\nskills:\n  - &s0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  - &s%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*s%d,", i-1), 10), ","))
	}
	wf := filepath.Join(ws, "baton.yaml")
	if err := os.WriteFile(wf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runBounded(t, "run", "--dry-run", "--workflow", wf)
	oneErrorLine(t, code, errOut)
}
