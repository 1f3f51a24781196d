package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/llm"
)

// Progress reporting. A step's tool rounds can take minutes; without a
// word from the runner a run looks hung. Config.Progress receives a stream
// of small events a caller draws as it likes (baton run draws a live line
// per step on a terminal, plain lines otherwise).
//
// The observer is called on a goroutine of its own, one event at a time and
// in the order the run produced them, so it need not be safe for concurrent
// use even though sub-agents run in parallel. It can neither fail nor stall
// a run: events are queued (and dropped, counted, when the queue is full),
// and a panic in the observer ends only the reporting, with a warning.

// ProgressKind says what a ProgressEvent reports.
type ProgressKind int

const (
	// ProgressStepStart: a skill step begins (Step, Skill, Phase).
	ProgressStepStart ProgressKind = iota + 1
	// ProgressTurnStart: a model turn of the step begins; ContextTokens is
	// the session's context as the budget measures it, against
	// ThresholdTokens and WindowTokens.
	ProgressTurnStart
	// ProgressToolStart and ProgressToolEnd bracket one tool call of the
	// step's agent (Tool, Detail; Failed on the end when the tool
	// returned an error).
	ProgressToolStart
	ProgressToolEnd
	// ProgressSubagentStart and ProgressSubagentEnd bracket one sub-agent
	// of a dispatch (Agent of Agents; Failed on the end).
	ProgressSubagentStart
	ProgressSubagentEnd
	// ProgressAgentStart: an external agent process (Config.AgentCmd) is
	// started for the step.
	ProgressAgentStart
	// ProgressThreshold: mid-step, the context reached the reset threshold
	// (ContextTokens the projection); the session is asked for its ledger
	// entry before it is replaced.
	ProgressThreshold
	// ProgressReset: the context was reset to a fresh session (Reason,
	// ContextTokens the projection that caused it).
	ProgressReset
	// ProgressStepEnd: the step ended (Turns, Usage, Elapsed; Err when it
	// failed, Next when it succeeded).
	ProgressStepEnd
)

// ProgressEvent is one thing a run reports while it goes. Fields a kind does
// not use are zero.
type ProgressEvent struct {
	Kind  ProgressKind
	Step  int
	Skill string
	Phase string

	Turn            int // 1-based, on ProgressTurnStart
	ContextTokens   int
	ThresholdTokens int
	WindowTokens    int

	Tool   string
	Detail string // the call's main argument (a path, a pattern), clipped

	Agent, Agents int // on sub-agent events: which one (1-based) of how many
	Failed        bool

	Reason  string // on ProgressReset
	Turns   int    // on ProgressStepEnd: model turns the step took
	Usage   llm.Usage
	Elapsed time.Duration
	Next    string // on ProgressStepEnd: the skill that runs next, or done
	Err     error
}

// progressQueue bounds how far an observer may fall behind before events
// are dropped: plenty for a display, small in memory.
const progressQueue = 1024

// progressDrain bounds how long the end of a run waits for a slow observer
// to catch up.
const progressDrain = 2 * time.Second

// observer delivers events to Config.Progress on its own goroutine.
type observer struct {
	fn   func(ProgressEvent)
	ch   chan ProgressEvent
	done chan struct{}

	mu      sync.Mutex
	closed  bool
	dropped int
	panic   any
}

// newObserver returns nil for a nil fn: every method is a no-op on nil.
func newObserver(fn func(ProgressEvent)) *observer {
	if fn == nil {
		return nil
	}
	o := &observer{fn: fn, ch: make(chan ProgressEvent, progressQueue), done: make(chan struct{})}
	go o.loop()
	return o
}

func (o *observer) loop() {
	defer close(o.done)
	for e := range o.ch {
		if !o.deliver(e) {
			// A broken observer gets nothing more; the queue is still
			// drained so senders never wait.
			for range o.ch {
			}
			return
		}
	}
}

func (o *observer) deliver(e ProgressEvent) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			o.mu.Lock()
			o.panic = p
			o.mu.Unlock()
			ok = false
		}
	}()
	o.fn(e)
	return true
}

// send queues e without waiting.
func (o *observer) send(e ProgressEvent) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	select {
	case o.ch <- e:
	default:
		o.dropped++
	}
}

// close delivers what is queued (waiting at most progressDrain) and returns
// what went wrong with the observer, as warnings.
func (o *observer) close() []string {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	close(o.ch)
	o.mu.Unlock()
	t := time.NewTimer(progressDrain)
	defer t.Stop()
	var warns []string
	select {
	case <-o.done:
	case <-t.C:
		warns = append(warns, fmt.Sprintf("progress display: still busy %s after the run ended; stopped waiting for it", progressDrain))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.panic != nil {
		warns = append(warns, fmt.Sprintf("progress display failed and was turned off (a bug in baton): %v", o.panic))
	}
	if o.dropped > 0 {
		warns = append(warns, fmt.Sprintf("progress display fell behind; %d progress events were not shown", o.dropped))
	}
	return warns
}

// closeProgress ends the reporting when Run or Resume returns.
func (r *runner) closeProgress() {
	for _, w := range r.obs.close() {
		r.warn(w)
	}
}

// progress reports an event of this step, filling in where it happens.
func (s *stepRun) progress(e ProgressEvent) {
	if s.r.obs == nil {
		return
	}
	e.Step, e.Skill, e.Phase = s.seq, s.skillName, s.r.wf.Phases[s.phase].Name
	if e.Kind == ProgressTurnStart || e.Kind == ProgressThreshold || e.Kind == ProgressReset {
		b := s.stepBudget()
		e.ThresholdTokens, e.WindowTokens = b.Threshold(), b.Window
	}
	s.r.obs.send(e)
}

// stepBudget is the budget the step's sessions are measured against.
func (s *stepRun) stepBudget() budget.Budget { return s.model().budget }

// turnStart counts and reports a model turn of the step.
func (s *stepRun) turnStart(turn, contextTokens int) {
	s.turns++
	s.progress(ProgressEvent{Kind: ProgressTurnStart, Turn: turn + 1, ContextTokens: contextTokens})
}

// toolStart reports a tool call about to run.
func (s *stepRun) toolStart(c llm.ToolCall) {
	if s.r.obs == nil {
		return
	}
	s.progress(ProgressEvent{Kind: ProgressToolStart, Tool: c.Name, Detail: toolDetail(c)})
}

// toolEnd reports a tool call that returned.
func (s *stepRun) toolEnd(c llm.ToolCall, out toolOutcome) {
	s.progress(ProgressEvent{Kind: ProgressToolEnd, Tool: c.Name, Failed: out.result.IsError})
}

// stepEnd reports the end of a step; err is nil when it succeeded.
func (s *stepRun) stepEnd(next string, err error) {
	s.finishTrace(next, err)
	s.progress(ProgressEvent{Kind: ProgressStepEnd, Turns: s.turns, Usage: s.usage, Elapsed: s.elapsed, Next: next, Err: err})
}

// subagentStart and subagentEnd bracket sub-agent i (0-based) of n. ret is
// what the sub-agent handed back: runSubagents marks a failure in it.
func (s *stepRun) subagentStart(i, n int) {
	s.progress(ProgressEvent{Kind: ProgressSubagentStart, Agent: i + 1, Agents: n})
}

func (s *stepRun) subagentEnd(i, n int, ret string) {
	s.progress(ProgressEvent{Kind: ProgressSubagentEnd, Agent: i + 1, Agents: n, Failed: strings.HasPrefix(ret, "the sub-agent failed")})
}

// requestTokens estimates the context a request holds: what a fresh
// session starts with, before the provider has measured it.
func (s *stepRun) requestTokens(req *llm.Request) int {
	n := s.r.counter.Count(req.System)
	for _, m := range req.Messages {
		n += s.r.counter.Count(m.Content)
	}
	return n
}

// toolDetail is the argument that says what a call is about, for a
// progress line: a path, a pattern, a query, or how many sub-agents.
func toolDetail(c llm.ToolCall) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(c.Input, &in) != nil {
		return ""
	}
	if raw, ok := in["tasks"]; ok {
		var tasks []json.RawMessage
		if json.Unmarshal(raw, &tasks) == nil {
			return fmt.Sprintf("%d tasks", len(tasks))
		}
	}
	for _, k := range []string{"path", "pattern", "query", "goal"} {
		var v string
		if raw, ok := in[k]; ok && json.Unmarshal(raw, &v) == nil && v != "" {
			return clip(v, 60)
		}
	}
	return ""
}
