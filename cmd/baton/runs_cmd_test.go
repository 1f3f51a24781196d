package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/pricing"
)

// askIn runs baton ask against the fake with its records in
// dir/.baton/runs, as a run made in dir keeps them, and returns its id.
func askIn(t *testing.T, dir string) string {
	t.Helper()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--runs-dir", filepath.Join(dir, ".baton", "runs"),
		"How long was the outage, why did it happen and what will change?")
	if code != exitOK {
		t.Fatalf("ask: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("ask warned: %s", errOut)
	}
	return decodeRecord(t, out).ID
}

func listRuns(t *testing.T, args ...string) ([]history.Run, string) {
	t.Helper()
	code, out, errOut := runBaton(t, "", append([]string{"runs", "list", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("runs list %q: exit %d\n%s", args, code, errOut)
	}
	var runs []history.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("runs list --json is not a JSON array: %v\n%s", err, out)
	}
	return runs, errOut
}

func runIDs(runs []history.Run) []string {
	ids := []string{}
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// An ask in one folder and a workflow run in another appear in one list,
// newest first, with the figures of their records; --search finds the ask
// by a word of its answer.
func TestRunsListTwoDirectories(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	askDir := t.TempDir()
	askID := askIn(t, askDir)

	ws := exampleWorkspace(t)
	w := llmtest.NewServer(t, finishing())
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", w.OpenAIBaseURL())
	time.Sleep(10 * time.Millisecond) // the run starts after the ask, to the millisecond
	code, _, runErr := runBaton(t, "", "run", "--workflow", filepath.Join(ws, "baton.yaml"))
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, runErr)
	}

	runs, _ := listRuns(t)
	if len(runs) != 2 {
		t.Fatalf("runs list = %v, want the run and the ask", runIDs(runs))
	}
	run, ask := runs[0], runs[1]
	if ask.ID != askID || ask.Kind != history.KindAsk || ask.Dir != askDir || ask.Status != "ok" ||
		ask.InputTokens != s.TotalUsage().InputTokens || ask.OutputTokens != s.TotalUsage().OutputTokens ||
		ask.NaiveSavings == nil || ask.SingleCallSavings == nil || ask.CostUSD == nil || ask.Model == "" {
		t.Errorf("ask row = %+v (server usage %+v)", ask, s.TotalUsage())
	}
	if run.Kind != history.KindRun || run.Dir != ws || run.Status != "ok" || run.Title != "greet-shout-flag" ||
		run.InputTokens != w.TotalUsage().InputTokens || run.OutputTokens != w.TotalUsage().OutputTokens || run.InputTokens == 0 ||
		run.CostUSD == nil || *run.CostUSD <= 0 || run.Model == "" || len(run.Skills) < 2 {
		t.Errorf("run row = %+v (server usage %+v)", run, w.TotalUsage())
	}
	// The end of the run states its cost, the same dollars as its row.
	if run.CostUSD != nil && !strings.Contains(runErr, "; cost "+pricing.FormatUSD(*run.CostUSD)+" for the whole run at list prices\n") {
		t.Errorf("the run's summary does not state its row's cost %s:\n%s", pricing.FormatUSD(*run.CostUSD), runErr)
	}
	// The workflow run's baseline: its later steps' calls would have
	// carried the earlier steps' contexts in one continuous session.
	if run.ContinuousSessionSavings == nil || *run.ContinuousSessionSavings <= 0 || *run.ContinuousSessionSavings >= 1 ||
		run.ContinuousSessionInputTokens <= run.InputTokens || ask.ContinuousSessionSavings != nil {
		t.Errorf("continuous-session baseline: run %d tokens, savings %v; ask savings %v", run.ContinuousSessionInputTokens, run.ContinuousSessionSavings, ask.ContinuousSessionSavings)
	}

	// The table has both, one line each, with their folders.
	code, out, _ := runBaton(t, "", "runs", "list")
	if code != exitOK || !strings.HasPrefix(out, "ID ") || strings.Count(out, "\n") != 3 ||
		!strings.Contains(out, askDir) || !strings.Contains(out, ws) || !strings.Contains(out, "greet-shout-flag") ||
		!strings.Contains(out, "VS ONE SESSION (MODELLED)") {
		t.Errorf("runs list:\n%s", out)
	}
	checkRunsListFilters(t, run.ID, askID)
	checkRunsShow(t, run.ID, askID)
}

// checkRunsListFilters: each filter of runs list keeps the runs it names.
func checkRunsListFilters(t *testing.T, runID, askID string) {
	t.Helper()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--search", "retry storm"}, []string{askID}}, // words of the answer
		{[]string{"--search", "pool"}, []string{askID}},
		{[]string{"--search", "greet-shout-flag"}, []string{runID}},
		{[]string{"--search", "nowhere-to-be-found"}, []string{}},
		{[]string{"--kind", "run"}, []string{runID}},
		{[]string{"--status", "failed,partial"}, []string{}},
		{[]string{"--since", "1h"}, []string{runID, askID}},
		{[]string{"--since", "2000-01-01", "--kind", "ask"}, []string{askID}},
	} {
		got, _ := listRuns(t, tc.args...)
		if strings.Join(runIDs(got), ",") != strings.Join(tc.want, ",") {
			t.Errorf("runs list %q = %v, want %v", tc.args, runIDs(got), tc.want)
		}
	}
}

// checkRunsShow: show finds a run by its id or a prefix of it, as text or
// JSON, and an unknown id is one line and exit 1.
func checkRunsShow(t *testing.T, runID, askID string) {
	t.Helper()
	code, out, errOut := runBaton(t, "", "runs", "show", askID[:len(askID)-2])
	if code != exitOK || !strings.Contains(out, "The outage lasted 3 h 42 min") || !strings.Contains(out, "record:") {
		t.Errorf("runs show: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runBaton(t, "", "runs", "show", runID)
	if code != exitOK || !strings.Contains(out, "against one continuous session that drops nothing (modelled: ") {
		t.Errorf("runs show of the workflow run: exit %d\n%s", code, out)
	}
	code, out, _ = runBaton(t, "", "runs", "show", "--json", runID)
	var shown history.Run
	if code != exitOK || json.Unmarshal([]byte(out), &shown) != nil || shown.ID != runID || len(shown.Skills) == 0 {
		t.Errorf("runs show --json: exit %d\n%s", code, out)
	}
	if code, _, errOut := runBaton(t, "", "runs", "show", "no-such-run"); code != exitError || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("show of an unknown id: exit %d, %q", code, errOut)
	}
}

// Deleting the database and listing again rebuilds it from the records.
func TestRunsRebuildAfterTheDatabaseIsDeleted(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	a, b := askIn(t, t.TempDir()), askIn(t, t.TempDir())
	before, _ := listRuns(t)

	db := filepath.Join(os.Getenv("BATON_HOME"), history.DBName)
	for _, ext := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + ext); err != nil && ext == "" {
			t.Fatal(err)
		}
	}
	after, errOut := listRuns(t)
	if !strings.Contains(errOut, "rebuilt it from the record files (2 runs)") {
		t.Errorf("stderr %q does not say the history was rebuilt", errOut)
	}
	if strings.Join(runIDs(after), ",") != b+","+a {
		t.Fatalf("after the rebuild: %v, want %s,%s", runIDs(after), b, a)
	}
	for i := range after {
		if !equalRuns(after[i], before[i]) {
			t.Errorf("row %d rebuilt as %+v, was %+v", i, after[i], before[i])
		}
	}
	if got, _ := listRuns(t, "--search", "outage"); len(got) != 2 {
		t.Errorf("search after the rebuild found %v", runIDs(got))
	}
}

func equalRuns(a, b history.Run) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A damaged database never fails an ask: it is kept aside, rebuilt, and
// the ask is in the new one.
func TestDamagedHistoryDoesNotFailAsk(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	first := askIn(t, t.TempDir())
	home := os.Getenv("BATON_HOME")
	if err := os.WriteFile(filepath.Join(home, history.DBName), []byte(strings.Repeat("garbage ", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(home, history.DBName+"-wal"))

	dir := t.TempDir()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--runs-dir", filepath.Join(dir, ".baton", "runs"), "How long was the outage?")
	if code != exitOK || !strings.Contains(out, "The outage lasted") {
		t.Fatalf("ask with a damaged history: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Count(errOut, "run history was damaged") != 1 {
		t.Errorf("stderr %q: want one line saying the history was damaged", errOut)
	}
	damaged, _ := filepath.Glob(filepath.Join(home, history.DBName+".damaged-*"))
	if len(damaged) != 1 {
		t.Errorf("damaged copies kept: %v", damaged)
	}
	runs, _ := listRuns(t)
	if len(runs) != 2 || runs[1].ID != first || runs[0].Dir != dir {
		t.Errorf("after the rebuild: %+v", runs)
	}

	// A history that cannot be opened at all (its folder is a file) costs
	// one warning line; the answer and the record stand.
	t.Setenv("BATON_HOME", filepath.Join(home, history.DBName+".damaged-x"))
	os.WriteFile(filepath.Join(home, history.DBName+".damaged-x"), []byte("x"), 0o644)
	code, out, errOut = runBaton(t, "", "ask", "--doc", exampleDoc, "--runs-dir", filepath.Join(dir, ".baton", "runs"), "How long was the outage?")
	if code != exitOK || !strings.Contains(out, "The outage lasted") {
		t.Fatalf("ask with no history: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Count(errOut, "warning") != 1 || strings.Count(errOut, "not in the run history") != 1 || !strings.Contains(errOut, "baton runs import "+filepath.Join(dir, ".baton", "runs")) {
		t.Errorf("stderr = %q, want one warning line", errOut)
	}
	if recs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*.json")); len(recs) != 2 {
		t.Errorf("records saved: %v", recs)
	}
}

// Runs made before the history existed come in with runs import.
func TestRunsImport(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	root := t.TempDir()
	id := askIn(t, filepath.Join(root, "project"))
	// A fresh history that never saw the run.
	t.Setenv("BATON_HOME", t.TempDir())
	if runs, _ := listRuns(t); len(runs) != 0 {
		t.Fatalf("a new history lists %v", runIDs(runs))
	}
	code, out, errOut := runBaton(t, "", "runs", "import", root)
	if code != exitOK || !strings.Contains(out, "Imported 1 run from") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if runs, _ := listRuns(t); len(runs) != 1 || runs[0].ID != id || runs[0].Dir != filepath.Join(root, "project") {
		t.Errorf("after import: %+v", runs)
	}
	for _, args := range [][]string{
		{"runs", "import", filepath.Join(root, "missing")},
		{"runs", "list", "--kind", "job"},
		{"runs", "list", "--status", "okay"},
		{"runs", "list", "--since", "yesterday"},
	} {
		code, _, errOut := runBaton(t, "", args...)
		if code == exitOK || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q: want one line and a failure", args, code, errOut)
		}
	}
}

// A workflow run the provider refuses is in the history as failed, with
// its error; the resume that finishes it turns the same row to ok.
func TestRunsFailedRunThenResumed(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	var refuse atomic.Bool
	refuse.Store(true)
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if refuse.Load() {
			return llmtest.Fail(400, "invalid_request_error", "the request was refused")
		}
		return finishing().Respond(r)
	}))
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	wf := filepath.Join(ws, "baton.yaml")
	if code, _, errOut := runBaton(t, "", "run", "--workflow", wf); code != exitError {
		t.Fatalf("refused run: exit %d\n%s", code, errOut)
	}
	runs, _ := listRuns(t, "--status", "failed")
	if len(runs) != 1 || runs[0].Kind != history.KindRun || !strings.Contains(runs[0].Error, "refused") {
		t.Fatalf("failed runs = %+v", runs)
	}
	refuse.Store(false)
	if code, _, errOut := runBaton(t, "", "resume", "--workflow", wf); code != exitOK {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	after, _ := listRuns(t)
	if len(after) != 1 || after[0].ID != runs[0].ID || after[0].Status != "ok" || after[0].Error != "" {
		t.Errorf("after the resume: %+v", after)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"7d", now.Add(-7 * 24 * time.Hour), true},
		{"1.5d", now.Add(-36 * time.Hour), true},
		{"2w", now.Add(-14 * 24 * time.Hour), true},
		{"90m", now.Add(-90 * time.Minute), true},
		{"2026-03-01T08:00:00Z", time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC), true},
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.Local), true},
		{"1e300d", time.Time{}, false},
		{"-3d", time.Time{}, false},
		{"NaNd", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	} {
		got, err := parseSince(tc.in, now)
		if (err == nil) != tc.ok || (tc.ok && !got.Equal(tc.want)) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
