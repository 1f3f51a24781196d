package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/tokens"
)

// runBaton drives the real command tree and returns exit code, stdout, stderr.
func runBaton(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	if len(args) > 0 && args[0] == "ask" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--planner") }) {
		// The ask tests script the full planner's plan over documents
		// on which the default answers in one direct call instead, so
		// they name the planner they script; what the default chooses
		// is tested by runDefault (ask_auto_test.go).
		args = append([]string{"ask", "--planner", "full"}, args[1:]...)
	}
	return runDefault(t, stdin, args...)
}

// runDefault runs baton with args exactly as given.
func runDefault(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTokensCommand(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.md")
	text := "# Title\n\nSome words to count, and a few more.\n"
	if err := os.WriteFile(a, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := tokens.Count(text)

	code, out, _ := runBaton(t, "more words on stdin", "tokens", "--json", a, "-")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Files []struct {
			File   string
			Tokens int
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(got.Files) != 2 || got.Files[0].Tokens != want {
		t.Fatalf("files = %+v, want first = %d tokens", got.Files, want)
	}
	if got.Total != want+tokens.Count("more words on stdin") {
		t.Fatalf("total = %d", got.Total)
	}

	code, _, errOut := runBaton(t, "", "tokens", filepath.Join(dir, "missing.md"))
	if code != exitError || !strings.Contains(errOut, "missing.md") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("missing file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runBaton(t, "", "tokens"); code != exitUsage {
		t.Fatalf("no args: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runBaton(t, "", "tokens", "--encoding", "nope", a); code != exitUsage {
		t.Fatalf("bad encoding: exit %d, want %d", code, exitUsage)
	}
}

// Defect: the text form printed "6864incident-report.md": right-aligned
// tabwriter columns put no padding after the last number. Every row is now
// the count, at least one space, and the name.
func TestTokensTextColumnsAreSeparated(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "incident-report.md")
	short := filepath.Join(dir, "b.md")
	if err := os.WriteFile(long, []byte(strings.Repeat("word ", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBaton(t, "", "tokens", long, short)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want rows for two files, the total and the encoding, got:\n%s", out)
	}
	for i, name := range []string{long, short, "total"} {
		f := strings.Fields(lines[i])
		if len(f) != 2 || f[1] != name {
			t.Errorf("row %d = %q; want a count, a space and %s", i, lines[i], name)
		}
	}
	// The counts stay right-aligned, so they line up by digit.
	if strings.Index(lines[0], " "+long) != strings.Index(lines[1], " "+short) {
		t.Errorf("names do not start in one column:\n%s", out)
	}
}
