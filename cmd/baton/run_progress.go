package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/term"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/runner"
)

// runProgress shows what `baton run` is doing, so that a step spending
// minutes in tool rounds does not look hung.
//
// On a terminal it keeps one live line for the step in progress, rewritten
// on every event and once a second (elapsed time, a retry's countdown);
// when the step ends the line is finalised and the next step gets a new
// one. The runner's own log lines and retry notices are written above the
// live line, which is drawn again below them.
//
// Elsewhere (a CI log, a pipe) it writes plain lines: one per tool call
// (with the turn and the context size), one per sub-agent that finishes,
// one per retry and one per step end. Step starts and resets are already
// logged by the runner. That is a few lines per turn: enough to follow a
// run in a CI log without flooding it.
type runProgress struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	width  func() int
	now    func() time.Time
	cur    *stepLine // the step in progress, nil between steps
	drawn  bool      // a live line is on screen, the cursor at its end
	closed bool
	stop   chan struct{}
	ticked sync.WaitGroup
}

// stepLine is what the live line of one step shows.
type stepLine struct {
	step         int
	skill, phase string
	start        time.Time
	turn         int
	ctx, thresh  int
	activity     string
	agents       int // sub-agents of the current dispatch
	running      int
	done, failed int
	retry        string    // the latest retry notice, until the next event
	retryAt      time.Time // when the retried call goes again
}

// newRunProgress draws on w, live when w is a terminal; width reports the
// terminal's current width (0 when unknown).
func newRunProgress(w io.Writer, live bool, width func() int, now func() time.Time) *runProgress {
	if width == nil {
		width = func() int { return 0 }
	}
	if now == nil {
		now = time.Now
	}
	return &runProgress{w: w, live: live, width: width, now: now}
}

// stderrProgress is the display for a command's stderr: live when it is a
// terminal that understands cursor movement (not TERM=dumb, and on Windows
// a console that accepts virtual terminal sequences).
func stderrProgress(stderr io.Writer) *runProgress {
	live := isTerminal(stderr) && os.Getenv("TERM") != "dumb"
	f, _ := stderr.(*os.File)
	live = live && enableVT(f)
	width := func() int { return 0 }
	if live {
		width = func() int {
			w, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return 0
			}
			return w
		}
	}
	return newRunProgress(stderr, live, width, nil)
}

// start redraws the live line once a second until close, so the elapsed
// time and a retry's countdown move while nothing else does.
func (p *runProgress) start() {
	if !p.live {
		return
	}
	p.stop = make(chan struct{})
	p.ticked.Add(1)
	go func() {
		defer p.ticked.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
}

// tick redraws the live line as time passes.
func (p *runProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && !p.closed && p.cur != nil {
		p.draw()
	}
}

// close stops drawing. A step still on the live line (the run was
// interrupted, or stopped between steps) is finalised as stopped.
func (p *runProgress) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	if p.cur != nil && p.live {
		p.finish(fmt.Sprintf("■ %s stopped after %s", p.cur.title(), p.elapsed(p.cur)))
	}
	p.closed = true
	p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.ticked.Wait()
	}
}

// event is the runner's Config.Progress.
func (p *runProgress) event(e runner.ProgressEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if e.Kind == runner.ProgressStepStart || p.cur == nil || p.cur.step != e.Step {
		if e.Kind == runner.ProgressReset {
			return // a boundary reset, after its step: the runner logs it
		}
		if p.cur != nil && p.live {
			p.finish(fmt.Sprintf("■ %s stopped after %s", p.cur.title(), p.elapsed(p.cur)))
		}
		p.cur = &stepLine{step: e.Step, skill: clean(e.Skill), phase: clean(e.Phase), start: p.now(), activity: "starting"}
	}
	c := p.cur
	c.retry = ""
	switch e.Kind {
	case runner.ProgressTurnStart:
		c.turn, c.ctx, c.thresh = e.Turn, e.ContextTokens, e.ThresholdTokens
		c.activity = "waiting for the model"
	case runner.ProgressToolStart, runner.ProgressToolEnd:
		p.toolEvent(c, e)
	case runner.ProgressSubagentStart, runner.ProgressSubagentEnd:
		p.subagentEvent(c, e)
	case runner.ProgressAgentStart:
		c.activity = "agent command running"
		if !p.live {
			p.plainf("%s: agent command started", c.title())
		}
	case runner.ProgressThreshold:
		c.ctx = e.ContextTokens
		c.activity = "context budget reached: asking for the ledger entry"
	case runner.ProgressReset:
		c.activity = "context reset to a fresh session"
	case runner.ProgressStepEnd:
		p.stepEnded(c, e)
		return
	}
	if p.live {
		p.draw()
	}
}

// toolEvent follows a tool call of the current step.
func (p *runProgress) toolEvent(c *stepLine, e runner.ProgressEvent) {
	if e.Kind == runner.ProgressToolEnd {
		c.activity = "working"
		c.agents = 0
		if e.Failed && !p.live {
			p.plainf("%s: turn %d: %s returned an error to the model", c.title(), c.turn, clean(e.Tool))
		}
		return
	}
	c.activity = clean(e.Tool)
	if d := clean(e.Detail); d != "" {
		c.activity += " " + d
	}
	// Sub-agents are counted per tool call (dispatch_agents,
	// delegate_task).
	c.agents, c.running, c.done, c.failed = 0, 0, 0, 0
	if !p.live {
		ctx := ""
		if c.thresh > 0 {
			ctx = " (" + c.context() + ")"
		}
		p.plainf("%s: turn %d: %s%s", c.title(), c.turn, c.activity, ctx)
	}
}

// subagentEvent counts the sub-agents of the current tool call.
func (p *runProgress) subagentEvent(c *stepLine, e runner.ProgressEvent) {
	c.agents = e.Agents
	if e.Kind == runner.ProgressSubagentStart {
		c.running++
		return
	}
	c.running = max(c.running-1, 0)
	c.done++
	status := "done"
	if e.Failed {
		c.failed++
		status = "failed"
	}
	if !p.live {
		p.plainf("%s: sub-agent %d of %d %s (%d of %d finished)", c.title(), e.Agent, e.Agents, status, c.done, e.Agents)
	}
}

// stepEnded writes the step's last line: done, stopped or failed. The
// runner's log has already said where the run goes next.
func (p *runProgress) stepEnded(c *stepLine, e runner.ProgressEvent) {
	line := fmt.Sprintf("%s done in %s · %s · %s", c.title(), dur(e.Elapsed), plural(e.Turns, "turn"), usageText(e))
	mark := "✓ "
	switch {
	case errors.Is(e.Err, context.Canceled):
		// Interrupted (Ctrl-C): the step did not fail, it stopped.
		line = fmt.Sprintf("%s stopped after %s · %s · %s", c.title(), dur(e.Elapsed), plural(e.Turns, "turn"), usageText(e))
		mark = "■ "
	case e.Err != nil:
		line = fmt.Sprintf("%s failed after %s · %s · %s", c.title(), dur(e.Elapsed), plural(e.Turns, "turn"), usageText(e))
		mark = "✗ "
	}
	if p.live {
		p.finish(mark + line)
	} else {
		p.plainf("%s", line)
	}
	p.cur = nil
}

// retry is the model's retry notice (modelFlags.onRetry): it goes on the
// live line, or on a plain line naming the step.
func (p *runProgress) retry(attempt int, wait time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		// After the run nothing retries; a notice is still never lost.
		fmt.Fprintf(p.w, "baton: attempt %d failed (%s); retrying in %s\n", attempt, clean(oneLineErr(err)), wait.Round(time.Millisecond))
		return
	}
	notice := fmt.Sprintf("attempt %d failed (%s)", attempt, clean(oneLineErr(err)))
	if !p.live || p.cur == nil {
		where := "baton: "
		if p.cur != nil {
			where += p.cur.title() + ": "
		}
		p.clearLive()
		fmt.Fprintf(p.w, "%s%s; retrying in %s\n", where, notice, wait.Round(time.Millisecond))
		return
	}
	p.cur.retry, p.cur.retryAt = textclip.Width(notice, 60), p.now().Add(wait)
	p.draw()
}

// logWriter is the runner's Config.Log: each line prefixed with "baton: ",
// and on a terminal written above the live line.
func (p *runProgress) logWriter() io.Writer { return progressLog{p} }

type progressLog struct{ p *runProgress }

func (l progressLog) Write(b []byte) (int, error) {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	if _, err := io.WriteString(p.w, "baton: "+string(b)); err != nil {
		return 0, err
	}
	if p.live && !p.closed && p.cur != nil {
		p.draw()
	}
	return len(b), nil
}

func (p *runProgress) plainf(format string, a ...any) {
	fmt.Fprintf(p.w, "baton: "+format+"\n", a...)
}

// clearLive erases the live line, if one is drawn, so that a whole line
// can be written in its place.
func (p *runProgress) clearLive() {
	if p.drawn {
		io.WriteString(p.w, clearLine)
		p.drawn = false
	}
}

// draw rewrites the live line of the current step.
func (p *runProgress) draw() {
	io.WriteString(p.w, clearLine+p.line(p.termWidth()))
	p.drawn = true
}

// finish writes the step's last line, which stays.
func (p *runProgress) finish(line string) {
	io.WriteString(p.w, clearLine+fitWidth(line, p.termWidth())+"\n")
	p.drawn = false
}

func (p *runProgress) termWidth() int {
	if w := p.width(); w > 20 {
		return w
	}
	return 80
}

// line is the live line of the current step, fitted to width. Where it
// does not fit, the parts that matter least go first (the phase, then the
// turn, then the context size), so that a narrow terminal still shows the
// step, the clock, a pending retry and what the step is doing.
func (p *runProgress) line(width int) string {
	c := p.cur
	segs := []segment{
		{"… step " + fmt.Sprint(c.step) + " " + c.skill, "", 0},
		{"[" + c.phase + "]", " ", 3},
		{p.elapsed(c), " ", 0},
	}
	if c.retry != "" {
		r := "retrying"
		if left := c.retryAt.Sub(p.now()); left > 0 {
			r += fmt.Sprintf(" in %ds", int((left+time.Second-1)/time.Second))
		}
		segs = append(segs, segment{r + " after " + c.retry, " · ", 0})
	}
	if c.turn > 0 {
		segs = append(segs, segment{fmt.Sprintf("turn %d", c.turn), " · ", 2})
	}
	if c.thresh > 0 {
		segs = append(segs, segment{fmt.Sprintf("context %s/%s (%d%%)", kTokens(c.ctx), kTokens(c.thresh), 100*c.ctx/c.thresh), " · ", 1})
	}
	act := textclip.Width(c.activity, 50)
	if c.agents > 0 {
		act = fmt.Sprintf("sub-agents: %d running, %d/%d done", c.running, c.done, c.agents)
		if c.failed > 0 {
			act += fmt.Sprintf(", %d failed", c.failed)
		}
	}
	segs = append(segs, segment{act, " · ", 0})
	return fitSegments(segs, width)
}

// segment is a part of the live line: its text, what separates it from the
// part before, and its rank among the parts dropped when the line is too
// long (the highest goes first; 0 is never dropped, only cut).
type segment struct {
	text, sep string
	drop      int
}

// fitSegments joins segs, dropping droppable parts until the line fits
// width; what still does not fit is cut.
func fitSegments(segs []segment, width int) string {
	for {
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.sep + s.text)
		}
		line := b.String()
		if len([]rune(line)) <= width-1 {
			return line
		}
		drop := -1
		for i, s := range segs {
			if s.drop > 0 && (drop < 0 || s.drop > segs[drop].drop) {
				drop = i
			}
		}
		if drop < 0 {
			return fitWidth(line, width)
		}
		segs = append(segs[:drop:drop], segs[drop+1:]...)
	}
}

func (p *runProgress) elapsed(c *stepLine) string { return dur(p.now().Sub(c.start)) }

func (c *stepLine) title() string {
	return fmt.Sprintf("step %d %s [%s]", c.step, c.skill, c.phase)
}

// context is the session's size against the reset threshold, for a plain
// line; callers check that the threshold is known (positive).
func (c *stepLine) context() string {
	return fmt.Sprintf("context %s tokens, %d%% of the %s reset threshold", kTokens(c.ctx), 100*c.ctx/c.thresh, kTokens(c.thresh))
}

func usageText(e runner.ProgressEvent) string {
	return fmt.Sprintf("%s in, %s out tokens", kTokens(int(e.Usage.PromptTokens())), kTokens(int(e.Usage.OutputTokens)))
}

// kTokens writes a token count short: 950, 12.3k, 1.2M.
func kTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
}

// dur writes a duration to the second: 9s, 1m12s, 1h02m.
func dur(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// clean keeps text from a model, a skill or an error from moving the
// cursor or changing the terminal: control characters (escape included)
// and the marks that reorder text (bidi overrides) become spaces, runs of
// space one.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
