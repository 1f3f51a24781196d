package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/state"
)

// The test binary doubles as the fake external agent: TestMain hands over
// to agentTestMain, which plays the agent when BATON_FAKE_AGENT is set, or
// a whole `baton run --agent-cmd` when BATON_TEST_AGENT_CHILD is set (so a
// test can kill it).
//
// The fake agent logs every invocation to $BATON_FAKE_DIR/invocations (one
// line: skill and working directory) and keeps its stdin in
// $BATON_FAKE_DIR/input-<n>-<skill>.txt. Its prose carries a marker,
// OUTPUT-OF-<skill>, that no later step may see. Knobs: BATON_FAKE_FAIL
// (a skill that exits 3), BATON_FAKE_MALFORMED (a skill that writes a
// broken handoff block), BATON_FAKE_SKIP_PLAN (the analysis hands off
// straight to implement-change), BATON_FAKE_WAIT (a skill that waits for
// $BATON_FAKE_DIR/go before answering).
func agentTestMain() (code int, ok bool) {
	if os.Getenv("BATON_FAKE_AGENT") != "" {
		return fakeAgent(), true
	}
	if dir := os.Getenv("BATON_TEST_AGENT_CHILD"); dir != "" {
		wf := loadOrDie(filepath.Join(dir, "baton.yaml"))
		if _, err := runner.Run(context.Background(), runner.Config{Workflow: wf, AgentCmd: os.Getenv("BATON_TEST_AGENT_CMD")}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4, true
		}
		return 0, true
	}
	return 0, false
}

func fakeAgent() int {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 9
	}
	dir, skill := os.Getenv("BATON_FAKE_DIR"), os.Getenv("BATON_SKILL")
	cwd, _ := os.Getwd()
	log := filepath.Join(dir, "invocations")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 9
	}
	fmt.Fprintf(f, "%s %s\n", skill, cwd)
	f.Close()
	prev, _ := os.ReadFile(log)
	n := strings.Count(string(prev), "\n")
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("input-%d-%s.txt", n, skill)), in, 0o644); err != nil {
		return 9
	}
	if os.Getenv("BATON_FAKE_FAIL") == skill {
		fmt.Fprintln(os.Stderr, "fake agent: starting")
		fmt.Fprintln(os.Stderr, "fake agent: the model quota is exhausted")
		return 3
	}
	if os.Getenv("BATON_FAKE_WAIT") == skill {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				break
			}
		}
	}
	fmt.Printf("OUTPUT-OF-%s: the fake agent did its work.\n\n", skill)
	if os.Getenv("BATON_FAKE_MALFORMED") == skill {
		fmt.Print("```handoff\nnext_skill: [unclosed\n```\n")
		return 0
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(9)
		}
	}
	switch skill {
	case "analyse-request":
		write("specs/analysis.md", "# Analysis\nAdd --shout.\n")
		next := "plan-change"
		if os.Getenv("BATON_FAKE_SKIP_PLAN") != "" {
			next = "implement-change"
		}
		// A code block before the handoff block, with a fence inside it
		// that is not a handoff.
		fmt.Print("Where the flag goes:\n\n````markdown\n```handoff\nnext_skill: write-report\n```\n````\n\n")
		fmt.Printf("```handoff\nnext_skill: %s\nopen_decisions:\n  - should --shout apply to errors too?\ndecisions:\n  - decision: flag named --shout\n    evidence: docs/requirements.md:3\nsummary: analysis written\n```\n", next)
	case "plan-change":
		write("specs/plan.md", "# Plan\n1. add the flag\n")
		// The same decision twice is recorded once.
		fmt.Print("```handoff\ncontext: the plan has one item\ndecisions:\n  - {decision: one plan item, evidence: specs/plan.md:2}\n  - {decision: one plan item, evidence: specs/plan.md:2}\n```\n")
	case "implement-change":
		write("app/greet.py", "print('HELLO')\n")
		fmt.Println("No handoff block from this agent.")
	default:
		fmt.Print("```handoff\nnext_skill: done\nsummary: \"REPORT: the --shout flag is in.\"\n```\n")
	}
	return 0
}

// fakeAgentCmd is the --agent-cmd that runs the fake agent with env.
func fakeAgentCmd(logDir string, env ...string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	parts := []string{"BATON_FAKE_AGENT=1", "BATON_FAKE_DIR=" + q(logDir)}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		parts = append(parts, k+"="+q(v))
	}
	return strings.Join(append(parts, "exec", q(os.Args[0])), " ")
}

// invocations lists the skills the fake agent ran for, in order.
func invocations(t *testing.T, logDir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logDir, "invocations"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		skill, _, _ := strings.Cut(l, " ")
		out = append(out, skill)
	}
	return out
}

func sameList(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

func TestAgentCmdRunsTheExampleEndToEnd(t *testing.T) {
	dir, logDir := copyExample(t), t.TempDir()
	stateBefore, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml"))
	var log strings.Builder
	wf := load(t, dir)
	res, err := runner.Run(context.Background(), runner.Config{Workflow: wf, AgentCmd: fakeAgentCmd(logDir), Log: &log})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	want := []string{"analyse-request", "plan-change", "implement-change", "write-report"}
	if got := invocations(t, logDir); !sameList(got, want) {
		t.Fatalf("agent ran for %v, want %v", got, want)
	}
	if res.Summary != "REPORT: the --shout flag is in." || res.Steps != 4 {
		t.Errorf("summary %q after %d steps", res.Summary, res.Steps)
	}
	if res.Usage.InputTokens != 0 || res.Usage.OutputTokens != 0 {
		t.Errorf("usage %+v, want zero: an external agent's usage is unknown", res.Usage)
	}
	// Every process ran in the workspace root.
	data, _ := os.ReadFile(filepath.Join(logDir, "invocations"))
	root, _ := filepath.EvalSymlinks(dir)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		_, cwd, _ := strings.Cut(l, " ")
		if c, _ := filepath.EvalSymlinks(cwd); c != root {
			t.Errorf("agent ran in %s, want the workspace %s", cwd, root)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app/greet.py")); string(got) != "print('HELLO')\n" {
		t.Errorf("app/greet.py = %q", got)
	}

	// Each process saw only its own fresh context: its SKILL.md body, no
	// other skill's body, and nothing an earlier step wrote to stdout.
	lib, _, err := wf.Library()
	if err != nil {
		t.Fatal(err)
	}
	for i, skill := range want {
		in, err := os.ReadFile(filepath.Join(logDir, fmt.Sprintf("input-%d-%s.txt", i+1, skill)))
		if err != nil {
			t.Fatal(err)
		}
		input := string(in)
		sk, _ := lib.Get(skill)
		if !strings.HasPrefix(input, strings.TrimSpace(sk.Body)) {
			t.Errorf("step %d (%s) input does not start with its SKILL.md body:\n%.300s", i+1, skill, input)
		}
		if !strings.Contains(input, runner.AgentInputSeparator) || !strings.Contains(input, "```handoff") {
			t.Errorf("step %d (%s) input lacks the separator or the handoff instructions", i+1, skill)
		}
		for _, other := range want {
			if other == skill {
				continue
			}
			o, _ := lib.Get(other)
			if heading := strings.SplitN(strings.TrimSpace(o.Body), "\n", 2)[0]; strings.Contains(input, heading) {
				t.Errorf("step %d (%s) input holds another skill's body (%q)", i+1, skill, heading)
			}
		}
		if strings.Contains(input, "OUTPUT-OF-") {
			t.Errorf("step %d (%s) input holds an earlier step's output", i+1, skill)
		}
	}
	// What travels between steps is state.yaml: the decisions and the
	// open question the analysis handed off are in the later inputs.
	plan, _ := os.ReadFile(filepath.Join(logDir, "input-2-plan-change.txt"))
	if !strings.Contains(string(plan), "flag named --shout") || !strings.Contains(string(plan), "should --shout apply to errors too?") {
		t.Errorf("the plan step did not receive the analysis's handoff through state.yaml:\n%s", plan)
	}

	f, err := state.Load(filepath.Join(dir, "specs/state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Handoff()
	var decisions []string
	for _, d := range h.Decisions {
		decisions = append(decisions, d.Skill+": "+d.Decision+" ("+d.Evidence+")")
	}
	wantDecisions := []string{"analyse-request: flag named --shout (docs/requirements.md:3)", "plan-change: one plan item (specs/plan.md:2)"}
	if !sameList(decisions, wantDecisions) {
		t.Errorf("decisions %q, want %q", decisions, wantDecisions)
	}
	if h.NextSkill != "done" || h.Context != "the plan has one item" || !sameList(h.OpenDecisions, []string{"should --shout apply to errors too?"}) {
		t.Errorf("handoff %+v", h)
	}
	stateAfter, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml"))
	for _, line := range strings.Split(string(stateBefore), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") && !strings.Contains(string(stateAfter), line) {
			t.Errorf("state.yaml lost the comment line %q", line)
		}
	}
	// The step without a handoff block fell back to the skill's default
	// next step, with a warning.
	warned := false
	for _, w := range res.Warnings {
		if strings.Contains(w, "implement-change") && strings.Contains(w, "no handoff block") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning about the missing handoff block: %q", res.Warnings)
	}

	// Boundaries were evaluated and the log is free of red flags.
	events, _, err := runlog.Read(filepath.Join(dir, ".baton", "runs", res.RunID, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	evals, calls := 0, 0
	for _, e := range events {
		switch e.Type {
		case runlog.BoundaryEvaluation:
			evals++
		case runlog.ModelCall:
			calls++
			if e.Model != "agent-cmd" || !strings.Contains(e.Note, "usage is unknown") {
				t.Errorf("agent call logged as %+v", e)
			}
		}
	}
	if evals != 2 || calls != 4 {
		t.Errorf("%d boundary evaluations and %d agent calls logged, want 2 and 4", evals, calls)
	}
	entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if f := ledger.Lint(events, entries, nil); len(f) != 0 {
		t.Errorf("lint findings: %v", f)
	}
}

func TestAgentCmdHandoffChoosesTheNextSkill(t *testing.T) {
	dir, logDir := copyExample(t), t.TempDir()
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir, "BATON_FAKE_SKIP_PLAN=1")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"analyse-request", "implement-change", "write-report"}
	if got := invocations(t, logDir); !sameList(got, want) || res.Steps != 3 {
		t.Errorf("agent ran for %v in %d steps, want %v: next_skill from the handoff block wins over the default", got, res.Steps, want)
	}
}

// oneLineErr checks err is one line holding every part.
func oneLineErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q lacks %q", msg, p)
		}
	}
}

func TestAgentCmdFailureFailsTheStepAndResumeSkipsCompletedSteps(t *testing.T) {
	dir, logDir := copyExample(t), t.TempDir()
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir, "BATON_FAKE_FAIL=implement-change")})
	oneLineErr(t, err, "implement-change", "exit status 3", "the model quota is exhausted")

	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir)})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	want := []string{"analyse-request", "plan-change", "implement-change", "implement-change", "write-report"}
	if got := invocations(t, logDir); !sameList(got, want) {
		t.Errorf("agent ran for %v, want %v: completed steps must not run again", got, want)
	}
	if res.Steps != 2 || res.Summary != "REPORT: the --shout flag is in." {
		t.Errorf("resumed run: %d steps, summary %q", res.Steps, res.Summary)
	}
}

func TestAgentCmdMalformedHandoffFailsClearly(t *testing.T) {
	dir, logDir := copyExample(t), t.TempDir()
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir, "BATON_FAKE_MALFORMED=plan-change")})
	oneLineErr(t, err, "plan-change", "handoff block")
	if !errors.Is(err, runner.ErrAgentHandoff) {
		t.Errorf("error %v does not wrap ErrAgentHandoff", err)
	}
	// A refused output is not recorded: the resume asks the agent again.
	if _, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir)}); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	want := []string{"analyse-request", "plan-change", "plan-change", "implement-change", "write-report"}
	if got := invocations(t, logDir); !sameList(got, want) {
		t.Errorf("agent ran for %v, want %v", got, want)
	}
}

func TestAgentCmdTimeoutAndCancellationKillTheProcess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{"timeout", 200 * time.Millisecond, false, "timed out after 200ms"},
		{"cancel", time.Minute, true, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyExample(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			// The shell starts a child that would outlive it unless the
			// whole process group is killed.
			cmd := fmt.Sprintf("sleep 60 & echo $! > '%s'; wait", pidFile)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for range 400 {
						if _, err := os.Stat(pidFile); err == nil {
							break
						}
						time.Sleep(5 * time.Millisecond)
					}
					cancel()
				}()
			}
			start := time.Now()
			_, err := runner.Run(ctx, runner.Config{Workflow: load(t, dir), AgentCmd: cmd, AgentTimeout: tc.timeout})
			oneLineErr(t, err, "analyse-request", tc.want)
			if time.Since(start) > 20*time.Second {
				t.Errorf("the step took %s to stop", time.Since(start))
			}
			data, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			fmt.Sscan(string(data), &pid)
			for range 200 {
				if gone(pid) {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Errorf("the agent's child %d outlived the step", pid)
		})
	}
}

// A run killed after an agent's output was recorded, but before the step
// was marked complete, resumes without starting the agent again: the
// output is answered from the step journal.
func TestAgentCmdKilledAfterOutputResumesFromTheJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir, logDir := copyExample(t), t.TempDir()
	statePath := filepath.Join(dir, "specs/state.yaml")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_AGENT_CHILD="+dir,
		"BATON_TEST_AGENT_CMD="+fakeAgentCmd(logDir, "BATON_FAKE_WAIT=plan-change"))
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("timed out waiting for %s; child stderr: %s", what, stderr.String())
	}
	waitFor("the plan-change agent", func() bool {
		got := invocations(t, logDir)
		return len(got) == 2 && got[1] == "plan-change"
	})
	// Hold state.yaml's lock so the child records the output and then
	// blocks before it can apply the handoff and end the step.
	unlock, err := state.Lock(statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(logDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the recorded output", func() bool {
		js, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "steps", "002-plan-change.jsonl"))
		if len(js) != 1 {
			return false
		}
		data, _ := os.ReadFile(js[0])
		return strings.Contains(string(data), `"kind":"call"`)
	})
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if err := unlock(); err != nil {
		t.Fatal(err)
	}

	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir)})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	want := []string{"analyse-request", "plan-change", "implement-change", "write-report"}
	if got := invocations(t, logDir); !sameList(got, want) {
		t.Errorf("agent ran for %v, want %v: a recorded output must not be asked for again", got, want)
	}
	if res.Replayed != 1 || res.Steps != 3 || res.Summary != "REPORT: the --shout flag is in." {
		t.Errorf("resumed run: %d replayed, %d steps, summary %q", res.Replayed, res.Steps, res.Summary)
	}
	h := mustHandoff(t, statePath)
	n := 0
	for _, d := range h.Decisions {
		if d.Decision == "one plan item" {
			n++
		}
	}
	if n != 1 || h.Context != "the plan has one item" {
		t.Errorf("the replayed handoff was applied %d times, context %q", n, h.Context)
	}
}

func mustHandoff(t *testing.T, path string) state.Handoff {
	t.Helper()
	f, err := state.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f.Handoff()
}
