package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "last" names the newest run of the history in runs show and runs report,
// so the README's report command follows the run just made; on an empty
// history it is one line and exit 1.
func TestRunsLastIsTheNewestRun(t *testing.T) {
	isolateEnv(t)
	if code, _, errOut := runBaton(t, "", "runs", "report", "last"); code != exitError || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, "no run in the history yet") {
		t.Errorf("report last on an empty history: exit %d, stderr %q", code, errOut)
	}
	doc := filepath.Join(t.TempDir(), "d.md")
	if err := os.WriteFile(doc, []byte("# A\n\nalpha\n\n# B\n\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	var ids []string
	for _, task := range []string{"What is A?", "What is B?"} {
		code, out, errOut := runBaton(t, "", "ask", "--dry-run", "--json", "--runs-dir", runs, "--doc", doc, task)
		if code != exitOK {
			t.Fatalf("ask: exit %d: %s", code, errOut)
		}
		ids = append(ids, decodeRecord(t, out).ID)
	}
	code, out, errOut := runBaton(t, "", "runs", "show", "last")
	if code != exitOK || !strings.Contains(out, ids[1]) || strings.Contains(out, ids[0]) {
		t.Errorf("runs show last: exit %d, %s%s; want run %s", code, out, errOut, ids[1])
	}
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runBaton(t, "", "runs", "report", "last", "--out", page); code != exitOK {
		t.Fatalf("runs report last: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<title>baton ask "+ids[1]+"</title>") {
		t.Errorf("runs report last did not report %s", ids[1])
	}
}
