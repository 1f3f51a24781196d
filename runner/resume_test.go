package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/testcache"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// TestMain lets the test binary play a baton run in a child process, so a
// test can kill it with SIGKILL at a chosen moment.
func TestMain(m *testing.M) {
	cleanup := testcache.Isolate() // lock files out of the user's cache
	if code, ok := agentTestMain(); ok {
		os.Exit(code)
	}
	if dir := os.Getenv("BATON_TEST_CHILD_DIR"); dir != "" {
		wf := loadOrDie(filepath.Join(dir, "baton.yaml"))
		model, err := openai.New(openai.Config{APIKey: "k", BaseURL: os.Getenv("BATON_TEST_CHILD_URL"), Model: "gpt-test"})
		if err != nil {
			os.Exit(3)
		}
		if _, err := runner.Run(context.Background(), runner.Config{Workflow: wf, Model: model, ModelName: "test-model"}); err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// volatile are the lines of state.yaml and the ledger that hold clock
// readings; everything else must be equal between an interrupted and an
// uninterrupted run.
var volatile = regexp.MustCompile(`(?m)^\s*(total_seconds|avg_seconds|at):.*$|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"specs/state.yaml", "specs/ledger.md", "specs/analysis.md", "specs/plan.md", "specs/report.md", "app/greet.py"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = volatile.ReplaceAllString(string(data), "<clock>")
	}
	return out
}

func TestKilledRunResumesWithoutPayingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// The reference: an uninterrupted run.
	ref := copyExample(t)
	refServer := llmtest.NewServer(t, script(true))
	refRes, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, ref), Model: providers["openai"](t, refServer), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}

	dir := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	// Kill the child when the first request of the fresh session after the
	// reset arrives: mid-phase, after a dispatch, a ledger write and a reset.
	var (
		mu        sync.Mutex
		killed    bool
		completed []string // bodies of requests answered before the kill
		child     *exec.Cmd
		killAt    = make(chan struct{})
	)
	s.OnRequest(func(r llmtest.RecordedRequest) {
		mu.Lock()
		defer mu.Unlock()
		if killed {
			return
		}
		if strings.Contains(r.System, "# Analyse the request") && len(r.Messages) == 1 && strings.Contains(r.Messages[0].Content, "## Ledger —") {
			killed = true
			child.Process.Signal(syscall.SIGKILL)
			close(killAt)
			return
		}
		completed = append(completed, string(r.Body))
	})
	child = exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_CHILD_DIR="+dir, "BATON_TEST_CHILD_URL="+s.OpenAIBaseURL())
	mu.Lock()
	if err := child.Start(); err != nil {
		mu.Unlock()
		t.Fatal(err)
	}
	mu.Unlock()
	select {
	case <-killAt:
	case <-time.After(60 * time.Second):
		child.Process.Kill()
		t.Fatal("the child never reached the kill point")
	}
	err = child.Wait()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child was not killed by a signal: %v", err)
	}
	before := s.Count()

	if _, ok := runner.Unfinished(load(t, dir)); !ok {
		t.Fatal("the killed run is not marked unfinished")
	}
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	reqs := s.Requests()
	paid := map[string]bool{}
	for _, b := range completed {
		paid[b] = true
	}
	for _, r := range reqs[before:] {
		if paid[string(r.Body)] {
			t.Errorf("a model call completed before the kill was sent again: %s", clipBody(r.Body))
		}
	}
	// Every completed call but the ledger request is answered from the
	// journal; the ledger request is not made at all, since the reset it
	// served is recorded whole.
	if res.Replayed != len(completed)-1 {
		t.Errorf("calls answered from the journal = %d, want %d", res.Replayed, len(completed)-1)
	}
	// Requests in all: the reference run's, plus the one in flight at the
	// kill, which is sent again.
	if got, want := s.Count(), refServer.Count()+1; got != want {
		t.Errorf("server saw %d requests, want %d (an uninterrupted run's %d + the one in flight)", got, want, refServer.Count())
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	got, want := snapshot(t, dir), snapshot(t, ref)
	for f := range want {
		if got[f] != want[f] {
			t.Errorf("%s differs from the uninterrupted run:\n--- resumed\n%s\n--- uninterrupted\n%s", f, got[f], want[f])
		}
	}
	if _, ok := runner.Unfinished(load(t, dir)); ok {
		t.Error("the run is still marked unfinished")
	}
	// The log says what was paid: one model_call with usage per request a
	// living baton got an answer to (all but the one in flight at the
	// kill), and the calls answered from the journal marked as replayed,
	// without usage, so that summing the log does not pay them twice.
	paidEvents, replayedEvents := loggedCalls(t, dir)
	if want := s.Count() - 1; paidEvents != want {
		t.Errorf("run log has %d paid model_call events, want %d (requests answered to a living baton)", paidEvents, want)
	}
	if replayedEvents == 0 || replayedEvents > res.Replayed {
		t.Errorf("run log has %d replayed model_call events; the result says %d calls were answered from the journal", replayedEvents, res.Replayed)
	}
	if got, want := loggedResets(t, dir), loggedResets(t, ref); got != want || want == 0 {
		t.Errorf("run log has %d resets not marked replayed; the uninterrupted run has %d", got, want)
	}
	if refPaid, _ := loggedCalls(t, ref); refPaid != refServer.Count() {
		t.Errorf("uninterrupted run log has %d paid model_call events, want %d", refPaid, refServer.Count())
	}
}

// loggedResets counts the resets of the run in dir's log that happened in
// it, not replayed from a step journal.
func loggedResets(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, e := range runEvents(t, dir) {
		if e.Type == runlog.Reset && !e.Replayed {
			n++
		}
	}
	return n
}

func runEvents(t *testing.T, dir string) []runlog.Event {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "events.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want one run log in %s, found %v", dir, logs)
	}
	events, _, err := runlog.Read(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// loggedCalls counts the model_call events of the run in dir's log that
// carry usage (paid) and those marked as answered from the journal.
func loggedCalls(t *testing.T, dir string) (paid, replayed int) {
	t.Helper()
	for _, e := range runEvents(t, dir) {
		if e.Type != runlog.ModelCall {
			continue
		}
		if e.Replayed {
			replayed++
			if e.Usage != nil {
				t.Errorf("replayed model_call at line %d carries usage %+v", e.Line, *e.Usage)
			}
			continue
		}
		if e.Usage != nil {
			paid++
		}
	}
	return paid, replayed
}

func clipBody(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func loadOrDie(path string) *workflowT {
	wf, err := loadWorkflow(path)
	if err != nil {
		os.Exit(2)
	}
	return wf
}

// A run that fails before any reset resumes from a ledger entry written at
// resume time, and its log stays free of red flags.
func TestFailedRunResumesFromAComposedLedgerEntry(t *testing.T) {
	dir := copyExample(t)
	broken := llmtest.Always(llmtest.Fail(400, "invalid_request_error", "boom")).WhenSystem("# Implement the change")
	s := llmtest.NewServer(t, broken, script(false))
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"})
	if err == nil || !strings.Contains(err.Error(), "implement-change") {
		t.Fatalf("Run = %v, want a failure in implement-change", err)
	}
	id, ok := runner.Unfinished(load(t, dir))
	if !ok {
		t.Fatal("the failed run is not resumable")
	}
	before := s.Count()
	s.SetRules(script(false))
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if res.RunID != id || res.Steps != 2 {
		t.Errorf("resumed run %s ran %d steps, want %s and 2 (implement, report)", res.RunID, res.Steps, id)
	}
	for _, r := range s.Requests()[before:] {
		if strings.Contains(r.System, "# Analyse the request") || strings.Contains(r.System, "# Plan the change") {
			t.Errorf("a completed step ran again: %.40q", r.System)
		}
	}
	entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].NextStep, "implement-change") {
		t.Fatalf("ledger = %+v, %v", entries, err)
	}
	events, _, err := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if f := ledger.Lint(events, entries, nil); len(f) != 0 {
		t.Errorf("lint findings: %v", f)
	}
}
