package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The -update flag may be registered by another command's tests in this
// package; share it rather than registering it twice.
var ledgerUpdate = func() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite golden files under testdata/")
	return func() bool { return *b }
}()

var findingRule = regexp.MustCompile(`^\S+: ([a-z-]+): `)

// Each crafted run under testdata/ledger/<case> carries one red flag (or
// none); the test checks the rules flagged, the exit code and, against a
// golden file, the exact lines printed.
func TestLedgerLintCraftedRuns(t *testing.T) {
	tests := []struct {
		name  string
		code  int
		rules []string
		warn  string // expected on stderr of a run that passes
	}{
		{name: "clean", code: 0},
		{name: "torn_log", code: 0, warn: "unfinished line"},
		{name: "no_boundary_evaluation", code: 1, rules: []string{"no-boundary-evaluation"}},
		{name: "hard_limit_reset", code: 1, rules: []string{"hard-limit-reset", "hard-limit-reset"}},
		{name: "resume_not_from_ledger", code: 1, rules: []string{"resume-not-from-ledger"}},
		{name: "incomplete_ledger_entry", code: 1, rules: []string{"incomplete-ledger-entry"}},
		{name: "oversize_return_ingested", code: 1, rules: []string{"oversize-return-ingested"}},
		{name: "copied_threshold_table", code: 1, rules: []string{"copied-threshold-table", "copied-threshold-table"}},
		{name: "copied_ledger_format", code: 1, rules: []string{"copied-ledger-format"}},
		{name: "reset_without_ledger", code: 1, rules: []string{"reset-without-ledger", "reset-without-ledger"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := filepath.Join("testdata", "ledger", tt.name)
			args := []string{"ledger", "lint", "--workspace", ws, "--run", "r1"}
			if _, err := os.Stat(filepath.Join(ws, "skills")); err == nil {
				args = append(args, "--skills", filepath.Join(ws, "skills"))
			}
			code, out, errOut := runBaton(t, "", args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			var rules []string
			for _, ln := range strings.Split(strings.TrimSpace(out), "\n") {
				if m := findingRule.FindStringSubmatch(ln); m != nil {
					rules = append(rules, m[1])
				}
			}
			if d := cmp.Diff(tt.rules, rules); d != "" {
				t.Errorf("rules flagged (-want +got):\n%s\nstdout: %s", d, out)
			}
			if tt.code == 0 && !strings.HasPrefix(out, "clean: ") {
				t.Errorf("a clean run should say so, got %q", out)
			}
			if tt.warn != "" && !strings.Contains(errOut, tt.warn) {
				t.Errorf("stderr %q lacks %q", errOut, tt.warn)
			}
			golden := filepath.Join(ws, "want.txt")
			if ledgerUpdate() {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), out); d != "" {
				t.Errorf("output (-golden +got):\n%s", d)
			}
		})
	}
}

// Bad input gets one line on stderr and a non-zero exit, never output that
// could be taken for a verdict.
func TestLedgerLintErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"nothing to check", []string{"ledger", "lint"}, 2, "nothing to check"},
		{"stray argument", []string{"ledger", "lint", "x"}, 2, "unknown command"},
		{"unknown subcommand", []string{"ledger", "lnit"}, 2, `unknown ledger command "lnit"`},
		{"malformed log", []string{"ledger", "lint", "--workspace", "testdata/ledger/malformed_log", "--run", "r1"}, 1, "events.jsonl:6: not a JSON event"},
		{"malformed ledger", []string{"ledger", "lint", "--workspace", "testdata/ledger/malformed_ledger", "--run", "r1"}, 1, "ledger.md:47: entry heading must read"},
		{"missing run", []string{"ledger", "lint", "--workspace", dir, "--run", "nope"}, 1, "no such file"},
		{"run not in log", []string{"ledger", "lint", "--log", "testdata/ledger/clean/.baton/runs/r1/events.jsonl", "--run", "r2"}, 1, `no events of run "r2"`},
		{"missing explicit ledger", []string{"ledger", "lint", "--ledger", filepath.Join(dir, "ledger.md")}, 1, "no such file"},
		{"skills folder without skills", []string{"ledger", "lint", "--skills", empty}, 1, "no SKILL.md found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runBaton(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q: want one line containing %q", errOut, tt.want)
			}
			if strings.Contains(out, "clean") {
				t.Errorf("stdout %q claims a verdict", out)
			}
		})
	}
}

func TestLedgerLintDirectFiles(t *testing.T) {
	const ws = "testdata/ledger/incomplete_ledger_entry"
	// --ledger alone checks just the ledger.
	code, out, _ := runBaton(t, "", "ledger", "lint", "--ledger", ws+"/specs/ledger.md")
	if code != 1 || !strings.Contains(out, "incomplete-ledger-entry") {
		t.Fatalf("exit %d, out %q", code, out)
	}
	// --log without --run reads every run in the file; the ledger path
	// comes from run_start, relative to the workspace.
	code, out, _ = runBaton(t, "", "ledger", "lint", "--workspace", ws, "--log", ws+"/.baton/runs/r1/events.jsonl")
	if code != 1 || !strings.Contains(out, "specs/ledger.md:47: incomplete-ledger-entry") {
		t.Fatalf("exit %d, out %q", code, out)
	}
	// A single SKILL.md may be named.
	code, out, _ = runBaton(t, "", "ledger", "lint", "--skills", "testdata/ledger/clean/skills/implement/SKILL.md")
	if code != 0 || !strings.HasPrefix(out, "clean: ") || !strings.Contains(out, "1 skill file") {
		t.Fatalf("exit %d, out %q", code, out)
	}
}
