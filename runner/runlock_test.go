package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/runlock"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// tree reads every file under dir: what a run that must write nothing is
// compared against.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// holdFirstRequest makes the server hold its first request until release
// is closed: the process that sent it is then mid-step, holding its run.
func holdFirstRequest(s *llmtest.Server) (arrived, release chan struct{}, count func() int) {
	arrived, release = make(chan struct{}), make(chan struct{})
	var (
		mu sync.Mutex
		n  int
	)
	s.OnRequest(func(llmtest.RecordedRequest) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			close(arrived)
			<-release
		}
	})
	return arrived, release, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Defect 14: a second `baton run` or `baton resume` on a live workspace
// resumed the same run, paying for its calls again and writing state.yaml
// and the run log alongside the first. Now it fails at once naming the
// process that holds the workspace, and writes nothing; once that process
// is killed with SIGKILL the workspace is free again.
func TestSecondProcessCannotJoinALiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	arrived, release, requests := holdFirstRequest(s)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_CHILD_DIR="+dir, "BATON_TEST_CHILD_URL="+s.OpenAIBaseURL())
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	wait(t, arrived, "the child's first model request")

	before := tree(t, dir)
	cfg := func() runner.Config {
		return runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"}
	}
	for name, start := range map[string]func(context.Context, runner.Config) (*runner.Result, error){"resume": runner.Resume, "run": runner.Run} {
		res, err := start(context.Background(), cfg())
		var held *runlock.HeldError
		if !errors.As(err, &held) || !errors.Is(err, runlock.ErrHeld) {
			t.Fatalf("%s on a live workspace = %+v, %v; want a HeldError", name, res, err)
		}
		if held.Holder.PID != child.Process.Pid || !strings.Contains(err.Error(), fmt.Sprintf("pid %d on host", child.Process.Pid)) {
			t.Errorf("%s: %v; want the holder to be the child, pid %d", name, err, child.Process.Pid)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error is not one line: %q", name, err)
		}
	}
	if n := requests(); n != 1 {
		t.Errorf("the server saw %d requests, want only the child's first", n)
	}
	after := tree(t, dir)
	for f, data := range after {
		if before[f] != data {
			t.Errorf("%s was written by a refused run", f)
		}
	}
	for f := range before {
		if _, ok := after[f]; !ok {
			t.Errorf("%s was removed by a refused run", f)
		}
	}
	if _, ok := before[".baton/run.lock.json"]; !ok {
		t.Error("the holder wrote no info file")
	} else if !strings.Contains(before[".baton/run.lock.json"], fmt.Sprintf(`"pid": %d`, child.Process.Pid)) {
		t.Errorf("info file = %s", before[".baton/run.lock.json"])
	}

	// The holder dies without a chance to clean up: its OS lock dies with
	// it and its info file is overwritten.
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	close(release)
	res, err := runner.Resume(context.Background(), cfg())
	if err != nil {
		t.Fatalf("Resume after the holder was killed: %v", err)
	}
	if res.Summary != "REPORT: the --shout flag is in." {
		t.Errorf("resumed run summary %q", res.Summary)
	}
	if _, err := os.Stat(runlock.InfoPath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the finished run left its info file: %v", err)
	}
	lintClean(t, dir, res.RunID, 2)
}

// lintClean checks that a run's log has no red flags and was written by
// sessions processes, one after another.
func lintClean(t *testing.T, dir, id string, sessions int) {
	t.Helper()
	events, problems, err := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if !p.Torn {
			t.Errorf("run log: %s", p)
		}
	}
	entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	if f := ledger.Lint(events, entries, nil); len(f) != 0 {
		t.Errorf("lint findings: %v", f)
	}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Session == "" {
			t.Errorf("line %d (%s) has no session", e.Line, e.Type)
		}
		seen[e.Session] = true
	}
	if len(seen) != sessions {
		t.Errorf("the log holds %d sessions, want %d", len(seen), sessions)
	}
}

// Two runs started at once in one process: exactly one runs the workspace.
func TestConcurrentRunsOnOneWorkspace(t *testing.T) {
	dir := copyExample(t)
	s := llmtest.NewServer(t, script(true))
	_, release, _ := holdFirstRequest(s)
	type result struct {
		res *runner.Result
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"})
			results <- result{res, err}
		}()
	}
	next := func() result {
		select {
		case r := <-results:
			return r
		case <-time.After(60 * time.Second):
			close(release)
			t.Fatal("a run did not return")
		}
		return result{}
	}
	// The winner is held at its first request, so the loser returns first.
	lost := next()
	close(release)
	won := next()
	var held *runlock.HeldError
	if !errors.As(lost.err, &held) || held.Holder.PID != os.Getpid() {
		t.Fatalf("first to return: %+v, %v; want a HeldError naming this process", lost.res, lost.err)
	}
	if won.err != nil {
		t.Fatalf("the run that holds the workspace: %v", won.err)
	}
	runs, _ := os.ReadDir(filepath.Join(dir, ".baton", "runs"))
	if len(runs) != 1 {
		t.Errorf("%d run directories, want 1", len(runs))
	}
	lintClean(t, dir, won.res.RunID, 1)
}
