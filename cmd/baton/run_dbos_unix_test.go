//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/pgtest"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// bodyCounter counts the requests a fake is sent, by the hash of their
// body: the same request sent twice is one paid call made twice.
type bodyCounter struct {
	mu    sync.Mutex
	seen  map[[32]byte]int
	order [][32]byte
}

func (c *bodyCounter) wrap(r llmtest.Rule) llmtest.Rule {
	c.seen = map[[32]byte]int{}
	return llmtest.Func(func(req llmtest.RecordedRequest) llmtest.Reply {
		h := sha256.Sum256(req.Body)
		c.mu.Lock()
		c.seen[h]++
		c.order = append(c.order, h)
		c.mu.Unlock()
		return r.Respond(req)
	})
}

// twice lists the bodies sent more than once.
func (c *bodyCounter) twice() [][32]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][32]byte
	for h, n := range c.seen {
		if n > 1 {
			out = append(out, h)
		}
	}
	return out
}

func (c *bodyCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// runUsage is the tokens a run's record counts as paid.
func runUsage(t *testing.T, dir string) (in, out int64) {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("%d runs in %s, want 1", len(runs), dir)
	}
	row, err := history.FromRunDir(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	return int64(row.InputTokens), int64(row.OutputTokens)
}

// The run acceptance: a `baton run --engine dbos` whose process is
// SIGKILLed in the middle of step 3, after two of that step's model calls
// were answered and its write_file ran, and a `baton resume --engine dbos`
// in a second process. The second process takes the step over at once
// (the run's step items belong to an executor named by the run, which DBOS
// recovers when the resuming process opens the engine), continues the same
// step from the engine's record: no request whose response was recorded
// reaches the fake again (by body hash; only the one in flight at the kill
// is sent twice), the write_file does not run again over an edit made
// between the processes, the run completes, the workspace equals an
// uninterrupted local run's, and the run record pays for every call once.
func TestRunDBOSKilledMidStepResumedByAnotherProcess(t *testing.T) {
	killAndResumeDBOS(t, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "# Implement") && rounds(r) == 2
	}, "implement-change", 3, dbosCounts{model: 3, tool: 3, replayed: 2}, true)
}

// SIGTERM in the same place: the run stops with its one line, which names
// the engine to resume on, and the item is left for the resume, which
// continues it the same way.
func TestRunDBOSInterruptedMidStepResumedByAnotherProcess(t *testing.T) {
	killAndResumeDBOSWith(t, syscall.SIGTERM, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "# Implement") && rounds(r) == 2
	}, "implement-change", 3, dbosCounts{model: 3, tool: 3, replayed: 2}, true)
}

// The same with the kill inside a step's tool call: a dispatch_agents call
// with one sub-agent answered and the other in flight. The tool call is
// one engine step, not recorded, so it runs again; the answered sub-agent's
// calls inside it come from the step's journal (an engine answers steps in
// order, and sub-agents run side by side), so only the one in flight is
// sent again.
func TestRunDBOSKilledMidDispatchResumedByAnotherProcess(t *testing.T) {
	killAndResumeDBOS(t, func(r llmtest.RecordedRequest) bool {
		return strings.Contains(r.System, "You are a sub-agent") && strings.Contains(r.Messages[0].Content, "find the tests")
	}, "analyse-request", 1, dbosCounts{model: 4, tool: 5, journalCalls: 4, journalTools: 2, replayed: 4}, false)
}

// dbosCounts is what a killed step must record in the end: model calls
// and tool calls as its item's steps, model calls and tool calls in its
// journal (a sub-agent's), and the calls the resume answers from a record.
type dbosCounts struct{ model, tool, journalCalls, journalTools, replayed int }

// killAndResumeDBOS runs the example workflow with --engine dbos in a
// process, SIGKILLs it when the request hold picks arrives (in step seq of
// skill), resumes it in a second process, and checks the run against an
// uninterrupted local one; want is what the step records. edit says the step's write_file ran before
// the kill and must not run again.
func killAndResumeDBOS(t *testing.T, hold func(llmtest.RecordedRequest) bool, skill string, seq int, want dbosCounts, edit bool) {
	t.Helper()
	killAndResumeDBOSWith(t, syscall.SIGKILL, hold, skill, seq, want, edit)
}

func killAndResumeDBOSWith(t *testing.T, sig syscall.Signal, hold func(llmtest.RecordedRequest) bool, skill string, seq int, want dbosCounts, edit bool) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds baton and starts PostgreSQL and two processes")
	}
	isolateEnv(t)
	srv := pgtest.Start(t)
	url := srv.URL("baton_run")
	bin := buildBaton(t)
	local := uninterruptedLocalRun(t)

	d := &dbosKill{bin: bin, dir: exampleWorkspace(t), a: newAsked()}
	d.wf = filepath.Join(d.dir, "baton.yaml")
	d.a.hold = hold
	d.s = llmtest.NewServer(t, d.calls.wrap(d.a.rule()))
	defer d.release()
	d.args = []string{"--workflow", d.wf, "--provider", "openai", "--base-url", d.s.OpenAIBaseURL(), "--concurrency", "1", "--engine", "dbos", "--database-url", url}
	sentBefore := d.stopFirst(t, sig)

	// The step's write_file ran before the kill; an edit now would be
	// overwritten if the resumed step ran it again.
	const edited = "print('edited between the processes')\n"
	if edit {
		if err := os.WriteFile(filepath.Join(d.dir, "app", "greet.py"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runID := filepath.Base(onlyRun(t, d.dir))
	item := runner.StepItemID(runID, seq)
	if st := itemStatus(t, url, item); st == "SUCCESS" || st == "" {
		t.Fatalf("step %d's item is %q after the %v, want it unfinished", seq, st, sig)
	}
	t.Logf("step %d's item after %v: %s", seq, sig, itemStatus(t, url, item))
	d.refuseLocalResume(t)
	secondErr := d.resumeInSecond(t, sentBefore)

	d.a.check(t)
	if tw := d.calls.twice(); len(tw) != 1 {
		t.Errorf("%d request bodies were sent more than once, want 1 (the one in flight at the kill)", len(tw))
	}
	if got := stepStarts(t, d.dir)[skill]; len(got) != 2 || got[0] != fmt.Sprint(seq) || got[1] != fmt.Sprint(seq) {
		t.Errorf("step %s started as %v, want it resumed under its number %d", skill, got, seq)
	}
	if !strings.Contains(secondErr, fmt.Sprintf(" %d calls answered from journals", want.replayed)) {
		t.Errorf("the resume did not say it answered the step's %d recorded calls:\n%s", want.replayed, secondErr)
	}
	if edit {
		if got, _ := os.ReadFile(filepath.Join(d.dir, "app", "greet.py")); string(got) != edited {
			t.Errorf("app/greet.py = %q: the step's write_file ran again over the edit", got)
		}
	}
	local.compare(t, d, edit)
	checkDBOSItem(t, url, item, filepath.Join(d.dir, ".baton", "runs", runID), seq, want)
}

// localRun is what an uninterrupted run on the local engine leaves: the
// workspace's files, the usage its record counts, the requests it sent.
type localRun struct {
	files   map[string]string
	in, out int64
	calls   bodyCounter
}

// uninterruptedLocalRun runs the example workflow on the local engine.
func uninterruptedLocalRun(t *testing.T) *localRun {
	t.Helper()
	l := &localRun{}
	dir := exampleWorkspace(t)
	ls := llmtest.NewServer(t, l.calls.wrap(llmtest.Func(workScript)))
	if code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"), "--provider", "openai", "--base-url", ls.OpenAIBaseURL(), "--concurrency", "1"); code != exitOK {
		t.Fatalf("the uninterrupted run: exit %d\n%s", code, errOut)
	}
	l.files = outcome(t, dir)
	l.in, l.out = runUsage(t, dir)
	return l
}

// compare holds the resumed run's workspace, usage and requests to the
// local run's: nothing lost, nothing paid twice.
func (l *localRun) compare(t *testing.T, d *dbosKill, edit bool) {
	t.Helper()
	got := outcome(t, d.dir)
	for f, w := range l.files {
		if f == "app/greet.py" && edit {
			continue // the test's own edit, checked apart
		}
		if got[f] != w {
			t.Errorf("%s differs from an uninterrupted local run's:\n--- resumed\n%s\n--- local\n%s", f, got[f], w)
		}
	}
	if in, out := runUsage(t, d.dir); in != l.in || out != l.out {
		t.Errorf("the run record counts %d input and %d output tokens, want the local run's %d and %d: a call was paid twice or lost", in, out, l.in, l.out)
	}
	if n := l.calls.total(); d.calls.total() != n+1 {
		t.Errorf("the fake was sent %d requests over both processes, want the local run's %d plus the one in flight at the kill", d.calls.total(), n)
	}
}

// dbosKill is a dbos run stopped in one process and resumed in another.
type dbosKill struct {
	bin, dir, wf string
	args         []string // run's and resume's flags
	a            *asked
	s            *llmtest.Server
	calls        bodyCounter
	released     bool
}

// release lets the held request go on (it fails at once).
func (d *dbosKill) release() {
	if !d.released {
		d.released = true
		close(d.a.release)
	}
}

// stopFirst starts the run in a process and stops it with sig when the held
// request arrives; it returns the requests sent by then.
func (d *dbosKill) stopFirst(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	first := exec.Command(d.bin, append([]string{"run"}, d.args...)...)
	first.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.a.arrived:
	case <-time.After(90 * time.Second):
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the run never reached the request to kill it at\n%s", firstErr.String())
	}
	sentBefore := d.calls.total()
	first.Process.Signal(sig)
	if sig == syscall.SIGKILL {
		if err := first.Wait(); err == nil || !first.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
			t.Fatalf("the first process was not killed: %v\n%s", first.ProcessState, firstErr.String())
		}
		d.release()
		return sentBefore
	}
	d.release() // the held request fails at once rather than waits
	first.Wait()
	if code := first.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(firstErr.String(), "resume with: baton resume --workflow "+d.wf+" --engine dbos\n") {
		t.Fatalf("after %v the run ended with exit %d, want %d and a line naming --engine dbos:\n%s", sig, code, exitInterrupted, firstErr.String())
	}
	return sentBefore
}

// refuseLocalResume: a resume on the local engine would find none of the
// step's calls in its journal and pay them again, so it is refused, and
// sends nothing.
func (d *dbosKill) refuseLocalResume(t *testing.T) {
	t.Helper()
	sent := d.calls.total()
	code, _, errOut := runBaton(t, "", "resume", "--workflow", d.wf, "--provider", "openai", "--base-url", d.s.OpenAIBaseURL(), "--concurrency", "1")
	if code == exitOK || !strings.Contains(errOut, "resume it with --engine dbos") {
		t.Errorf("a local resume of the dbos run: exit %d, want it refused naming --engine dbos:\n%s", code, errOut)
	}
	if d.calls.total() != sent {
		t.Errorf("the refused local resume sent %d requests", d.calls.total()-sent)
	}
}

// resumeInSecond resumes the run on the dbos engine in a second process,
// which must finish it; it returns that process's standard error.
func (d *dbosKill) resumeInSecond(t *testing.T, sentBefore int) string {
	t.Helper()
	d.a.mu.Lock()
	d.a.hold = nil
	d.a.mu.Unlock()
	second := exec.Command(d.bin, append([]string{"resume"}, d.args...)...)
	second.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	var secondOut, secondErr bytes.Buffer
	second.Stdout, second.Stderr = &secondOut, &secondErr
	start := time.Now()
	done := make(chan error, 1)
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("resume: %v\n%s", err, secondErr.String())
		}
	case <-time.After(60 * time.Second):
		second.Process.Kill()
		t.Fatalf("the resume did not end within 60s\n%s", secondErr.String())
	}
	took := time.Since(start)
	t.Logf("resume in a second process: %v for the rest of the run (%d requests before the kill, %d in all)", took.Round(time.Millisecond), sentBefore, d.calls.total())
	if got := strings.TrimSpace(secondOut.String()); got != "REPORT: the --shout flag is in." {
		t.Fatalf("resume printed %q\n%s", got, secondErr.String())
	}
	return secondErr.String()
}

// checkDBOSItem: the engine, not the journal, holds the step's own calls:
// its item has every model call and tool call as a step, and the journal
// only what ran inside its tool calls (the sub-agents').
func checkDBOSItem(t *testing.T, url, item, runDir string, seq int, want dbosCounts) {
	t.Helper()
	names := itemSteps(t, url, item)
	var gotModel, gotTool int
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "call "):
			gotModel++
		case strings.HasPrefix(n, "tool "):
			gotTool++
		}
	}
	if gotModel != want.model || gotTool != want.tool {
		t.Errorf("step %d's item recorded %d model calls and %d tool calls as steps (%q), want %d and %d", seq, gotModel, gotTool, names, want.model, want.tool)
	}
	if st := itemStatus(t, url, item); st != "SUCCESS" {
		t.Errorf("step %d's item is %q, want SUCCESS", seq, st)
	}
	journals, _ := filepath.Glob(filepath.Join(runDir, "steps", fmt.Sprintf("%03d-*.jsonl", seq)))
	if len(journals) != 1 {
		t.Fatalf("%d journals of step %d, want 1", len(journals), seq)
	}
	data, _ := os.ReadFile(journals[0])
	if c, tl := bytes.Count(data, []byte(`"kind":"call"`)), bytes.Count(data, []byte(`"kind":"tool"`)); c != want.journalCalls || tl != want.journalTools {
		t.Errorf("step %d's journal holds %d model calls and %d tool calls, want %d and %d (the sub-agents')", seq, c, tl, want.journalCalls, want.journalTools)
	}
}

func onlyRun(t *testing.T, dir string) string {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	return runs[0]
}

func itemStatus(t *testing.T, url, id string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var st string
	if err := conn.QueryRow(context.Background(), `SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1`, id).Scan(&st); err != nil {
		t.Fatalf("status of %s: %v", id, err)
	}
	return st
}

func itemSteps(t *testing.T, url, id string) []string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT function_name FROM dbos.operation_outputs WHERE workflow_uuid = $1 ORDER BY function_id`, id)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}
