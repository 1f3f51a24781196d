package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/runner"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// feed plays one step with a tool call, a dispatch of two sub-agents (one
// fails), a retry and a log line, moving the clock as it goes.
func feed(p *runProgress, clock *fakeClock) {
	step := func(e runner.ProgressEvent) runner.ProgressEvent {
		e.Step, e.Skill, e.Phase = 1, "analyse-request", "analysis"
		return e
	}
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressStepStart}))
	fmt.Fprintf(p.logWriter(), "step 1 analyse-request: fresh context of 1234 tokens\n")
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressTurnStart, Turn: 1, ContextTokens: 1234, ThresholdTokens: 130000, WindowTokens: 200000}))
	clock.advance(3 * time.Second)
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressToolStart, Tool: "read_file", Detail: "docs/" + strings.Repeat("very-long-name-", 4) + ".md"}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressToolEnd, Tool: "read_file"}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressToolStart, Tool: "dispatch_agents", Detail: "2 tasks"}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressSubagentStart, Agent: 1, Agents: 2}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressSubagentStart, Agent: 2, Agents: 2}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressSubagentEnd, Agent: 2, Agents: 2, Failed: true}))
	// An error text holding an escape sequence (from a provider's body)
	// must not reach the terminal as one.
	p.retry(1, 4*time.Second, errors.New("429 rate limited \x1b[31mred\x1b[0m"))
}

func finishFeed(p *runProgress, clock *fakeClock) {
	step := func(e runner.ProgressEvent) runner.ProgressEvent {
		e.Step, e.Skill, e.Phase = 1, "analyse-request", "analysis"
		return e
	}
	clock.advance(62 * time.Second)
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressSubagentEnd, Agent: 1, Agents: 2}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressToolEnd, Tool: "dispatch_agents"}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressTurnStart, Turn: 2, ContextTokens: 65000, ThresholdTokens: 130000, WindowTokens: 200000}))
	p.event(step(runner.ProgressEvent{Kind: runner.ProgressStepEnd, Turns: 2, Elapsed: 65 * time.Second, Next: "plan-change",
		Usage: llm.Usage{InputTokens: 45200, CacheReadInputTokens: 1000, OutputTokens: 3100}}))
}

// frames splits terminal output into what each rewrite put on its line.
func frames(out string) []string {
	var fs []string
	for _, f := range strings.Split(out, clearLine)[1:] {
		for _, line := range strings.Split(f, "\n") {
			if line != "" {
				fs = append(fs, line)
			}
		}
	}
	return fs
}

func TestRunProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	width := 200
	p := newRunProgress(&buf, true, func() int { return width }, clock.now)
	feed(p, clock)

	out := buf.String()
	fs := frames(out)
	last := fs[len(fs)-1]
	want := "… step 1 analyse-request [analysis] 3s · retrying in 4s after attempt 1 failed (429 rate limited [31mred [0m) · turn 1 · context 1.2k/130k (0%) · sub-agents: 1 running, 1/2 done, 1 failed"
	if last != want {
		t.Errorf("live line\n got %q\nwant %q", last, want)
	}
	// The log line was written whole on a cleared line, above the live
	// line, which came back after it.
	i := strings.Index(out, clearLine+"baton: step 1 analyse-request: fresh context of 1234 tokens\n")
	if i < 0 || !strings.HasPrefix(out[i+len(clearLine):], "baton: step 1") || !strings.Contains(out[i:], "\n"+clearLine+"… step 1") {
		t.Errorf("the log line is not above a redrawn live line:\n%q", out)
	}
	if strings.Contains(strings.ReplaceAll(out, clearLine, ""), "\033") {
		t.Errorf("an escape sequence other than the line clearing reached the terminal: %q", out)
	}

	// The countdown moves with the clock, on the ticker's redraw.
	clock.advance(2 * time.Second)
	p.tick()
	if fs := frames(buf.String()); !strings.HasPrefix(fs[len(fs)-1], "… step 1 analyse-request [analysis] 5s · retrying in 2s after attempt 1") {
		t.Errorf("after 2s the line is %q", fs[len(fs)-1])
	}

	// A narrow terminal (resized mid-run) cuts every line to its width.
	width = 40
	buf.Reset()
	finishFeed(p, clock)
	p.event(runner.ProgressEvent{Kind: runner.ProgressStepStart, Step: 2, Skill: "plan-change", Phase: "design"})
	p.close()
	p.event(runner.ProgressEvent{Kind: runner.ProgressTurnStart, Step: 2, Skill: "plan-change", Phase: "design", Turn: 1})
	out = buf.String()
	for _, f := range frames(out) {
		if n := len([]rune(f)); n > width-1 {
			t.Errorf("a line of %d runes on a %d-column terminal: %q", n, width, f)
		}
	}
	fs = frames(out)
	// The phase, the turn and the context size made way; the activity was
	// cut.
	if want := "… step 1 analyse-request 1m07s · waiti…"; fs[len(fs)-4] != want {
		t.Errorf("turn 2 frame %q, want %q", fs[len(fs)-4], want)
	}
	// The step's end replaced its live line for good; the next step got
	// its own line, finalised as stopped at close; nothing came after.
	wantEnd := clearLine + fitWidth("✓ step 1 analyse-request [analysis] done in 1m05s · 2 turns · 46.2k in, 3.1k out tokens", 40) + "\n"
	if !strings.Contains(out, wantEnd) {
		t.Errorf("no finalised line %q in %q", wantEnd, out)
	}
	if !strings.HasSuffix(out, clearLine+fitWidth("■ step 2 plan-change [design] stopped after 0s", 40)+"\n") {
		t.Errorf("the unfinished step was not finalised as stopped: %q", out)
	}

	// At full width the finalised line is whole.
	width = 200
	buf.Reset()
	p2 := newRunProgress(&buf, true, func() int { return width }, clock.now)
	feed(p2, clock)
	finishFeed(p2, clock)
	if !strings.Contains(buf.String(), clearLine+"✓ step 1 analyse-request [analysis] done in 1m05s · 2 turns · 46.2k in, 3.1k out tokens\n") {
		t.Errorf("finalised line missing: %q", buf.String())
	}
	if !strings.Contains(buf.String(), clearLine+"… step 1 analyse-request [analysis] 1m05s · turn 2 · context 65k/130k (50%) · waiting for the model"+clearLine) {
		t.Errorf("no whole turn 2 frame: %q", buf.String())
	}
}

func TestRunProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := newRunProgress(&buf, false, nil, clock.now)
	p.start() // no ticker off a terminal
	feed(p, clock)
	finishFeed(p, clock)
	p.event(runner.ProgressEvent{Kind: runner.ProgressStepStart, Step: 2, Skill: "plan-change", Phase: "design"})
	p.event(runner.ProgressEvent{Kind: runner.ProgressTurnStart, Step: 2, Skill: "plan-change", Phase: "design", Turn: 1, ContextTokens: 900, ThresholdTokens: 130000})
	p.event(runner.ProgressEvent{Kind: runner.ProgressToolStart, Step: 2, Skill: "plan-change", Phase: "design", Tool: "write_file", Detail: "specs/plan.md"})
	p.event(runner.ProgressEvent{Kind: runner.ProgressToolEnd, Step: 2, Skill: "plan-change", Phase: "design", Tool: "write_file", Failed: true})
	p.event(runner.ProgressEvent{Kind: runner.ProgressStepEnd, Step: 2, Skill: "plan-change", Phase: "design", Turns: 1, Elapsed: time.Second, Err: errors.New("boom")})
	p.event(runner.ProgressEvent{Kind: runner.ProgressStepStart, Step: 3, Skill: "implement-change", Phase: "implement"})
	p.event(runner.ProgressEvent{Kind: runner.ProgressStepEnd, Step: 3, Skill: "implement-change", Phase: "implement", Elapsed: 2 * time.Second,
		Err: fmt.Errorf("model: %w", context.Canceled)})
	p.close()

	want := `baton: step 1 analyse-request: fresh context of 1234 tokens
baton: step 1 analyse-request [analysis]: turn 1: read_file docs/very-long-name-very-long-name-very-long-name-very-long-name-.md (context 1.2k tokens, 0% of the 130k reset threshold)
baton: step 1 analyse-request [analysis]: turn 1: dispatch_agents 2 tasks (context 1.2k tokens, 0% of the 130k reset threshold)
baton: step 1 analyse-request [analysis]: sub-agent 2 of 2 failed (1 of 2 finished)
baton: step 1 analyse-request [analysis]: attempt 1 failed (429 rate limited [31mred [0m); retrying in 4s
baton: step 1 analyse-request [analysis]: sub-agent 1 of 2 done (2 of 2 finished)
baton: step 1 analyse-request [analysis] done in 1m05s · 2 turns · 46.2k in, 3.1k out tokens
baton: step 2 plan-change [design]: turn 1: write_file specs/plan.md (context 900 tokens, 0% of the 130k reset threshold)
baton: step 2 plan-change [design]: turn 1: write_file returned an error to the model
baton: step 2 plan-change [design] failed after 1s · 1 turn · 0 in, 0 out tokens
baton: step 3 implement-change [implement] stopped after 2s · 0 turns · 0 in, 0 out tokens
`
	if got := buf.String(); got != want {
		t.Errorf("plain output:\n%s\nwant:\n%s", got, want)
	}
}

// Off a terminal, `baton run` writes the plain lines: tool calls with their
// turn, step ends, and a retry naming its step.
func TestRunPrintsProgressLines(t *testing.T) {
	isolateEnv(t)
	dir := exampleWorkspace(t)
	var mu sync.Mutex
	failed := false
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(r.System, "# Analyse the request") {
			if n := len(r.Messages); n == 1 {
				if !failed {
					failed = true
					return llmtest.Overloaded()
				}
				return llmtest.CallTools(llmtest.Call("read_file", `{"path": "docs/requirements.md"}`))
			}
		}
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: all phases done")
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	}))
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"))
	if code != exitOK || strings.TrimSpace(out) != "REPORT: all phases done" {
		t.Fatalf("run: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	for _, want := range []string{
		"baton: step 1 analyse-request [analysis]: attempt 1 failed (",
		"baton: step 1 analyse-request [analysis]: turn 1: read_file docs/requirements.md (context ",
		"baton: step 1 analyse-request [analysis]: turn 2: finish (context ",
		"baton: step 1 analyse-request [analysis] done in ",
		" · 2 turns · ",
		"baton: step 4 write-report [report] done in ",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "\r") || strings.Contains(errOut, "\033") {
		t.Errorf("stderr off a terminal holds cursor control: %q", errOut)
	}
}

// A line too long for the terminal drops the phase, then the turn, then the
// context size, before it cuts what the step is doing.
func TestRunProgressLineDropsLeastFirst(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := newRunProgress(io.Discard, true, nil, clock.now)
	ev := func(e runner.ProgressEvent) {
		e.Step, e.Skill, e.Phase = 1, "analyse-request", "analysis"
		p.event(e)
	}
	ev(runner.ProgressEvent{Kind: runner.ProgressStepStart})
	ev(runner.ProgressEvent{Kind: runner.ProgressTurnStart, Turn: 3, ContextTokens: 91000, ThresholdTokens: 130000})
	ev(runner.ProgressEvent{Kind: runner.ProgressToolStart, Tool: "dispatch_agents"})
	ev(runner.ProgressEvent{Kind: runner.ProgressSubagentStart, Agent: 1, Agents: 3})
	clock.advance(75 * time.Second)
	for _, tc := range []struct {
		width int
		want  string
	}{
		{120, "… step 1 analyse-request [analysis] 1m15s · turn 3 · context 91k/130k (70%) · sub-agents: 1 running, 0/3 done"},
		{100, "… step 1 analyse-request 1m15s · turn 3 · context 91k/130k (70%) · sub-agents: 1 running, 0/3 done"},
		{90, "… step 1 analyse-request 1m15s · context 91k/130k (70%) · sub-agents: 1 running, 0/3 done"},
		{80, "… step 1 analyse-request 1m15s · sub-agents: 1 running, 0/3 done"},
		{30, "… step 1 analyse-request 1m1…"},
	} {
		p.mu.Lock()
		got := p.line(tc.width)
		p.mu.Unlock()
		if got != tc.want {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, tc.want)
		}
		if n := len([]rune(got)); n > tc.width-1 {
			t.Errorf("width %d: line of %d runes", tc.width, n)
		}
	}
}

// ask's block on a terminal shows a retry notice above itself, where it
// stays, instead of swallowing it.
func TestAskProgressShowsRetries(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100)
	p.event(orchestrate.Event{Index: -1, Phase: "dispatch", Status: "running"})
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "running", Message: "first"})
	p.retry(1, 2*time.Second, errors.New("HTTP 529: overloaded \x1b]0;title\x07"))
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "ok", Message: "first"})
	p.close()
	p.retry(2, time.Second, errors.New("late"))

	out := buf.String()
	notice := "baton: attempt 1 failed (HTTP 529: overloaded ]0;title); retrying in 2s"
	// Drawn over the two rows' place, then the two rows below it; the
	// header counts the retry.
	header := "ask: plan ✓ › assemble ✓ › dispatch … › synthesise — 1 retry\n"
	want := "\033[2A" + clearLine + notice + "\n" + clearLine + header + clearLine + "… subtask 1 running: first\n"
	if !strings.Contains(out, want) {
		t.Errorf("the notice is not above a redrawn block:\n%q\nwant within it\n%q", out, want)
	}
	// The next redraw moves up over the two rows only: the notice stays.
	if !strings.Contains(out[strings.Index(out, want)+len(want):], "\033[2A"+clearLine+header+clearLine+"✓ subtask 1 ok: first\n") {
		t.Errorf("the redraw after the notice is wrong: %q", out)
	}
	if strings.Count(out, notice) != 1 || !strings.HasSuffix(out, "baton: attempt 2 failed (late); retrying in 1s\n") {
		t.Errorf("notices drawn %d times, or the one after close lost: %q", strings.Count(out, notice), out)
	}
}
