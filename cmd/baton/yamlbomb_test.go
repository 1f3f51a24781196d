package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// bombSkill is a SKILL.md of about 550 bytes whose frontmatter aliases
// expand to 9^9 values. Before yamlsafe each command below took more than
// 1.7 GB and five minutes over it and died out of memory.
func bombSkill(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: Frontmatter whose aliases expand to 9^9 values.\nmetadata:\n", name)
	b.WriteString(" l0: &l0 [x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, " l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	b.WriteString("---\nNever reached.\n")
	return b.String()
}

// runBounded runs baton under a 10 s hang guard and reports the time and
// bytes allocated.
func runBounded(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, out, errOut = runBaton(t, "", args...)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("baton %s still running after 10 s", strings.Join(args, " "))
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
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
	writeTestSkill(t, dir, "bomb", bombSkill("bomb"))
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
	writeTestSkill(t, dir, "bomb", bombSkill("bomb"))
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
	writeTestSkill(t, filepath.Join(ws, "skills"), "bomb", bombSkill("bomb"))
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
