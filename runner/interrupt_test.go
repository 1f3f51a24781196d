package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// turnKey names one turn of one session, whatever the bodies hold: the
// number of messages names the turn; the system prompt names the step, and
// with it whether the session was seeded from a ledger entry (a reset's
// fresh session) or, for a sub-agent, its brief. A resume that asks an
// answered turn again, even with a first message rebuilt differently or
// different tool results in it, sends a key already answered.
func turnKey(r llmtest.RecordedRequest) string {
	session := ""
	if len(r.Messages) > 0 {
		session = fmt.Sprint(strings.Contains(r.Messages[0].Content, "## Ledger —"))
		if strings.Contains(r.System, "You are a sub-agent") {
			session = r.Messages[0].Content
		}
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", r.System, session, len(r.Messages), r.ToolChoiceName)
}

// turns plays the example's script, counting the turns it answers, and
// lets a test stop one chosen request instead (fail it, or hold it while
// the run is interrupted).
type turns struct {
	mu       sync.Mutex
	answered map[string]int
	again    []string
	stop     func(r llmtest.RecordedRequest) (llmtest.Reply, bool)
}

func newTurns() *turns { return &turns{answered: map[string]int{}} }

func (tr *turns) rule(inner llmtest.Rule) llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		tr.mu.Lock()
		stop := tr.stop
		tr.mu.Unlock()
		if stop != nil {
			if reply, ok := stop(r); ok {
				return reply
			}
		}
		k := turnKey(r)
		tr.mu.Lock()
		if tr.answered[k] > 0 {
			tr.again = append(tr.again, fmt.Sprintf("%.60q turn of %d messages", r.System, len(r.Messages)))
		}
		tr.answered[k]++
		tr.mu.Unlock()
		return inner.Respond(r)
	})
}

func (tr *turns) setStop(f func(r llmtest.RecordedRequest) (llmtest.Reply, bool)) {
	tr.mu.Lock()
	tr.stop = f
	tr.mu.Unlock()
}

// checkNoTurnAskedTwice fails the test for every answered turn the
// provider was asked again.
func (tr *turns) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, a := range tr.again {
		t.Errorf("a turn already answered was asked again: %s", a)
	}
}

// reference runs the example uninterrupted and returns its workspace.
func reference(t *testing.T) (string, *runner.Result) {
	t.Helper()
	ref := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, ref), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	return ref, res
}

// dropResumeEntries removes from a rendered ledger the entries a resume
// composes when the run had written none: the one entry a resumed run's
// ledger may hold beyond an uninterrupted run's.
func dropResumeEntries(ledger string) string {
	parts := strings.SplitAfter(ledger, "\n")
	var out, entry strings.Builder
	flush := func() {
		if !strings.Contains(entry.String(), "resume the run at skill") {
			out.WriteString(entry.String())
		}
		entry.Reset()
	}
	for _, l := range parts {
		if strings.HasPrefix(l, "## Ledger — ") {
			flush()
		}
		entry.WriteString(l)
	}
	flush()
	return out.String()
}

// sameOutcome checks that state.yaml, the ledger and the artifacts equal
// the uninterrupted run's; except lists files the test changed itself.
func sameOutcome(t *testing.T, dir, ref string, except ...string) {
	t.Helper()
	got, want := snapshot(t, dir), snapshot(t, ref)
	got["specs/ledger.md"] = dropResumeEntries(got["specs/ledger.md"])
	for f := range want {
		skip := false
		for _, e := range except {
			skip = skip || e == f
		}
		if !skip && got[f] != want[f] {
			t.Errorf("%s differs from the uninterrupted run:\n--- resumed\n%s\n--- uninterrupted\n%s", f, got[f], want[f])
		}
	}
}

// stepNumbers returns, for each skill, the step numbers its step_start
// events carried, in order.
func stepNumbers(t *testing.T, dir, id string) map[string][]string {
	t.Helper()
	events, _, err := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range events {
		if e.Type == runlog.StepStart {
			out[e.Skill] = append(out[e.Skill], e.Step)
		}
	}
	return out
}

// checkSameNumber checks that skill's step started twice (before and after
// the interruption) under number n, and that every step is numbered as in
// an uninterrupted run.
func checkSameNumber(t *testing.T, dir, id, skill, n string) {
	t.Helper()
	got := stepNumbers(t, dir, id)
	if s := got[skill]; len(s) != 2 || s[0] != n || s[1] != n {
		t.Errorf("step %s started as %v, want [%s %s]", skill, s, n, n)
	}
	want := map[string]string{"analyse-request": "1", "plan-change": "2", "implement-change": "3", "write-report": "4"}
	for sk, nums := range got {
		for _, num := range nums {
			if num != want[sk] {
				t.Errorf("step %s numbered %s, want %s (all: %v)", sk, num, want[sk], got)
			}
		}
	}
}

// editRequirements changes the first step's input file, which only that
// step reads (declared in its context, and through read_file).
func editRequirements(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "docs", "requirements.md")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "docs"), "requirements.md", string(data)+"\nEdited after the interruption.\n")
}

func isImplement(r llmtest.RecordedRequest) bool { return strings.Contains(r.System, "# Implement") }

// A step whose turn 2 fails after every retry (HTTP 500) resumes in its own
// session: same number, turns 0 and 1 answered from the journal, their tool
// calls (a read, a write) not run again. The test edits the file the step
// wrote between the runs: a write run again would overwrite the edit, and a
// read run again would fork the next request.
func TestResumeAfterProviderFailureContinuesTheStep(t *testing.T) {
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	tr.setStop(func(r llmtest.RecordedRequest) (llmtest.Reply, bool) {
		return llmtest.Fail(500, "api_error", "the server fell over"), isImplement(r) && agentRounds(r) == 2
	})
	s := llmtest.NewServer(t, tr.rule(script(true)))
	model := llm.WithRetry(providers["openai"](t, s), llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: model, ModelName: "test-model"})
	var se *runner.StepError
	if !errors.As(err, &se) || se.Kind != runner.FailTransient || se.Step != 3 || !se.Resumable() {
		t.Fatalf("Run = %v (%+v), want a transient failure of step 3", err, se)
	}
	id, ok := runner.Unfinished(load(t, dir))
	if !ok {
		t.Fatal("the failed run is not resumable")
	}
	const edited = "print('edited by the user')\n"
	writeFile(t, filepath.Join(dir, "app"), "greet.py", edited)

	tr.setStop(nil)
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: model, ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	if res.Replayed != 2 || res.ReplayedTools != 2 {
		t.Errorf("replayed %d calls and %d tool calls, want 2 and 2", res.Replayed, res.ReplayedTools)
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app/greet.py")); string(got) != edited {
		t.Errorf("app/greet.py = %q: the step's write_file ran again over the user's edit", got)
	}
	checkSameNumber(t, dir, id, "implement-change", "3")
	lintClean(t, dir, id, 2)
	sameOutcome(t, dir, ref, "app/greet.py")
}

// A step stopped by --max-turns right after a mid-step reset resumes with
// a higher limit where it stopped: the reset is not done again (no ledger
// request, no second entry), the fresh session goes on. The step's input
// file, edited between the runs, would change its first context if it were
// rebuilt and its read_file result if the read ran again.
func TestResumeAfterMaxTurnsRightAfterAReset(t *testing.T) {
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	s := llmtest.NewServer(t, tr.rule(script(true)))
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model", MaxTurns: 2})
	var se *runner.StepError
	if !errors.As(err, &se) || se.Kind != runner.FailMaxTurns || se.Step != 1 || se.MaxTurns != 2 || !errors.Is(err, runner.ErrMaxTurns) {
		t.Fatalf("Run = %v, want step 1 stopped at --max-turns 2", err)
	}
	id, _ := runner.Unfinished(load(t, dir))
	editRequirements(t, dir)
	ledgerBefore, _ := os.ReadFile(filepath.Join(dir, "specs/ledger.md"))

	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	for _, r := range s.Requests() {
		if r.ToolChoiceName == "write_ledger" && tr.answered[turnKey(r)] != 1 {
			t.Error("the ledger entry was asked for again")
		}
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	if n := strings.Count(string(ledgerBefore), "## Ledger"); n != 1 {
		t.Fatalf("the stopped run wrote %d ledger entries, want 1 (the reset's)", n)
	}
	checkSameNumber(t, dir, id, "analyse-request", "1")
	lintClean(t, dir, id, 2)
	sameOutcome(t, dir, ref)
}

// A run cancelled (as Ctrl-C cancels it) while a dispatch_agents call has
// one sub-agent answered and the next in flight records the step as
// interrupted; the resume answers the first sub-agent from the journal,
// asks the second, and runs the dispatch's siblings once.
func TestResumeAfterCancelMidDispatch(t *testing.T) {
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make(chan struct{})
	var once sync.Once
	tr.setStop(func(r llmtest.RecordedRequest) (llmtest.Reply, bool) {
		if !strings.Contains(r.System, "You are a sub-agent") || !strings.Contains(r.Messages[0].Content, "find the tests") {
			return llmtest.Reply{}, false
		}
		once.Do(func() { cancel(); close(held) })
		return llmtest.Fail(500, "api_error", "held until cancelled"), true
	})
	s := llmtest.NewServer(t, tr.rule(script(true)))
	_, err := runner.Run(ctx, runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model", SubagentConcurrency: 1})
	<-held
	var se *runner.StepError
	if !errors.As(err, &se) || se.Kind != runner.FailInterrupted || se.Step != 1 {
		t.Fatalf("Run = %v, want step 1 interrupted", err)
	}
	id, _ := runner.Unfinished(load(t, dir))
	events, _, _ := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if last := events[len(events)-1]; last.Type != runlog.StepEnd || last.Status != "interrupted" || last.Step != "1" || !strings.HasPrefix(last.Note, "interrupted: ") {
		t.Errorf("the last event is %+v, want step 1's step_end, interrupted", last)
	}

	tr.setStop(nil)
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model", SubagentConcurrency: 1})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	// Turns 0 and 1 of the session and the first sub-agent.
	if res.Replayed != 3 {
		t.Errorf("calls answered from the journal = %d, want 3", res.Replayed)
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	checkSameNumber(t, dir, id, "analyse-request", "1")
	lintClean(t, dir, id, 2)
	sameOutcome(t, dir, ref)
}

// After a SIGKILL mid-step, the step's read of a file it wrote itself is
// not run again (it would read the step's own write and fork every later
// request): the result comes from the journal.
func TestKilledStepDoesNotReadItsOwnWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	killed := make(chan struct{})
	var child *exec.Cmd
	var started sync.WaitGroup
	started.Add(1)
	var once sync.Once
	tr.setStop(func(r llmtest.RecordedRequest) (llmtest.Reply, bool) {
		if !isImplement(r) || agentRounds(r) != 2 {
			return llmtest.Reply{}, false
		}
		started.Wait()
		once.Do(func() { child.Process.Signal(syscall.SIGKILL); close(killed) })
		return llmtest.Fail(500, "api_error", "killed"), true
	})
	s := llmtest.NewServer(t, tr.rule(script(true)))
	child = exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_CHILD_DIR="+dir, "BATON_TEST_CHILD_URL="+s.OpenAIBaseURL())
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	started.Done()
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		child.Process.Kill()
		t.Fatal("the child never reached the kill point")
	}
	child.Wait()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatal("the child was not killed by the signal")
	}
	id, _ := runner.Unfinished(load(t, dir))
	if got, _ := os.ReadFile(filepath.Join(dir, "app/greet.py")); string(got) != "print('HELLO')\n" {
		t.Fatalf("the step had not written app/greet.py before the kill: %q", got)
	}

	tr.setStop(nil)
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	if res.Replayed != 2 || res.ReplayedTools != 2 {
		t.Errorf("replayed %d calls and %d tool calls, want 2 and 2", res.Replayed, res.ReplayedTools)
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	checkSameNumber(t, dir, id, "implement-change", "3")
	lintClean(t, dir, id, 2)
	sameOutcome(t, dir, ref)
}

// crash is what a crash hook panics with.
type crash struct{}

// runCrashing runs the example and plays the process dying at the first
// time point is reached.
func runCrashing(t *testing.T, dir, point string, s *llmtest.Server) {
	t.Helper()
	var once sync.Once
	defer runner.SetCrashHook(func(p string) {
		if p == point {
			once.Do(func() { panic(crash{}) })
		}
	})()
	defer func() {
		if r := recover(); r != (crash{}) {
			t.Fatalf("the run did not crash at %q: %v", point, r)
		}
	}()
	runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"})
}

// A process that dies between journalling a reset and appending its
// ledger entry, or between recording a step in state.yaml and ending it in
// the run log, leaves a resume that neither loses nor repeats the write:
// one ledger entry, one completed step.
func TestCrashBetweenRecordsIsResumedOnce(t *testing.T) {
	for _, tc := range []struct{ point, skill, step string }{
		{"reset recorded", "analyse-request", "1"},
		{"state updated", "analyse-request", "1"},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ref, refRes := reference(t)
			dir := copyExample(t)
			tr := newTurns()
			s := llmtest.NewServer(t, tr.rule(script(true)))
			runCrashing(t, dir, tc.point, s)
			id, ok := runner.Unfinished(load(t, dir))
			if !ok {
				t.Fatal("the crashed run is not resumable")
			}
			res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"})
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			tr.check(t)
			if res.Summary != refRes.Summary {
				t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
			}
			checkSameNumber(t, dir, id, tc.skill, tc.step)
			sameOutcome(t, dir, ref)
			lintClean(t, dir, id, 2)
		})
	}
}

// A run cancelled (Ctrl-C) while the fresh session after a mid-step reset
// waits for its first answer resumes in that session: the old session's
// turns, its sub-agents and the ledger request are not asked again, and the
// reset's entry is written once.
func TestResumeAfterCancelRightAfterAReset(t *testing.T) {
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	tr.setStop(func(r llmtest.RecordedRequest) (llmtest.Reply, bool) {
		if !strings.Contains(r.System, "# Analyse the request") || len(r.Messages) != 1 || !strings.Contains(r.Messages[0].Content, "## Ledger —") {
			return llmtest.Reply{}, false
		}
		once.Do(cancel)
		return llmtest.Fail(500, "api_error", "held until cancelled"), true
	})
	s := llmtest.NewServer(t, tr.rule(script(true)))
	_, err := runner.Run(ctx, runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	var se *runner.StepError
	if !errors.As(err, &se) || se.Kind != runner.FailInterrupted || se.Step != 1 {
		t.Fatalf("Run = %v, want step 1 interrupted", err)
	}
	id, _ := runner.Unfinished(load(t, dir))
	tr.setStop(nil)
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	// Turns 0 and 1 and the two sub-agents; the ledger request is not
	// made, since the reset is recorded whole.
	if res.Replayed != 4 {
		t.Errorf("calls answered from the journal = %d, want 4", res.Replayed)
	}
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	checkSameNumber(t, dir, id, "analyse-request", "1")
	sameOutcome(t, dir, ref)
	lintClean(t, dir, id, 2)
}
