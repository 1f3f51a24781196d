package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/runlock"
)

// A workspace another process runs: baton run, baton run --fresh and baton
// resume stop with one line naming the holder and write nothing; a dry run
// takes no lock and still works.
func TestRunRefusesAWorkspaceInUse(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	wf := filepath.Join(ws, "baton.yaml")
	l, err := runlock.Acquire(ws, runlock.Holder{Command: "baton run"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	want := fmt.Sprintf("baton: another baton process (pid %d on host ", os.Getpid())
	for _, args := range [][]string{
		{"run", "--workflow", wf, "--agent-cmd", "true"},
		{"run", "--fresh", "--workflow", wf, "--agent-cmd", "true"},
		{"resume", "--workflow", wf, "--agent-cmd", "true"},
	} {
		code, _, errOut := runBaton(t, "", args...)
		if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, want) ||
			!strings.Contains(errOut, "`baton run`) is running this workspace; wait for it or stop it") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line %q…", args, code, errOut, exitError, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".baton", "runs")); err == nil {
		t.Error("a refused run wrote .baton/runs")
	}
	if _, err := os.Stat(filepath.Join(ws, ".baton", "current.json")); err == nil {
		t.Error("a refused run wrote .baton/current.json")
	}
	if code, _, errOut := runBaton(t, "", "run", "--dry-run", "--workflow", wf); code != exitOK {
		t.Errorf("dry run on a workspace in use: exit %d: %s", code, errOut)
	}
}

// An unfinished run on a workspace another process holds: the refusal is
// the one line naming the holder, without a "resuming run" line before it
// that would say the opposite (seen: both lines, resuming first).
func TestRunOnABusyWorkspaceDoesNotSayItResumes(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	wf := filepath.Join(ws, "baton.yaml")
	if code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", "false"); code == exitOK {
		t.Fatalf("a run whose agent fails succeeded: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, ".baton", "current.json")); err != nil {
		t.Fatalf("the failed run left no unfinished run to resume: %v", err)
	}
	l, err := runlock.Acquire(ws, runlock.Holder{Command: "baton run"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, args := range [][]string{
		{"run", "--workflow", wf, "--agent-cmd", "true"},
		{"resume", "--workflow", wf, "--agent-cmd", "true"},
		{"resume", "--workflow", wf},
	} {
		code, _, errOut := runBaton(t, "", args...)
		if code != exitError || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "resuming") ||
			!strings.Contains(errOut, "is running this workspace") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and only the line naming the holder", args, code, errOut, exitError)
		}
	}
}
