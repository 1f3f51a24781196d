package runner

import (
	"context"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
)

// Tracing. Config.Trace is told where the parts of a run begin and end, on
// the run's own goroutines and with their contexts, so that a trace span
// started for a part is the parent of what runs inside it (a step's model
// calls, a dispatch's sub-agents). Unlike Config.Progress it is called
// synchronously: it must be cheap and must not block. Package telemetry
// implements it with OpenTelemetry spans.

// Tracer receives the structure of a run. Start begins a part and returns
// the context the part runs under and the function that ends it, called
// once. Event records, on the part of ctx, a moment the run log records too
// (a reset, a boundary evaluation, a resume, a call answered from the
// journal): e is the run log's event, with the budget's threshold and window
// filled in on a reset.
type Tracer interface {
	Start(ctx context.Context, p Part) (context.Context, func(End))
	Event(ctx context.Context, e runlog.Event)
}

// PartKind says what a Part is.
type PartKind int

const (
	// PartRun is a run or a resume of one (Workflow, Resume, Model).
	PartRun PartKind = iota + 1
	// PartStep is one skill step (Step, Skill, Phase).
	PartStep
	// PartSubagent is one sub-agent of a delegate_task or dispatch_agents
	// call (Agent of Agents, Goal), in the step of Step.
	PartSubagent
	// PartTool is one tool call of a step's agent or a sub-agent (Call;
	// Replayed when its result came from the journal and it did not run).
	PartTool
)

// Part is one part of a run. Fields a kind does not use are zero.
type Part struct {
	Kind  PartKind
	RunID string

	Workflow string
	Resume   bool
	Model    string

	Step  int
	Skill string
	Phase string

	Agent, Agents int    // 1-based, on PartSubagent
	Goal          string // the sub-agent's brief's goal: message content

	Call     llm.ToolCall
	Replayed bool
}

// End is how a part ended.
type End struct {
	Err error
	// Result is the run's, on PartRun.
	Result *Result
	// Usage, Turns and Calls are a step's (Calls counts its model calls,
	// replayed ones included), or on a replayed PartTool what the journal
	// recorded for the call's sub-agents. Next is where the run goes after
	// a step that succeeded.
	Usage        llm.Usage
	Turns, Calls int
	Next         string
	// Tool is a tool call's result.
	Tool *llm.ToolResult
}

// trace starts part p when the run is traced.
func (r *runner) trace(ctx context.Context, p Part) (context.Context, func(End)) {
	if r.cfg.Trace == nil {
		return ctx, func(End) {}
	}
	p.RunID = r.id
	return r.cfg.Trace.Start(ctx, p)
}

// mark passes a run log event to the tracer.
func (r *runner) mark(ctx context.Context, e runlog.Event) {
	if r.cfg.Trace == nil {
		return
	}
	e.Run = r.id
	r.cfg.Trace.Event(ctx, e)
}

// traceStep starts the step's part; finishTrace ends it, once, however
// the step ended.
func (s *stepRun) traceStep(ctx context.Context) context.Context {
	ctx, s.endTrace = s.r.trace(ctx, Part{Kind: PartStep, Step: s.seq, Skill: s.skillName, Phase: s.r.wf.Phases[s.phase].Name})
	return ctx
}

func (s *stepRun) finishTrace(next string, err error) {
	if s.endTrace == nil {
		return
	}
	s.r.mu.Lock()
	e := End{Err: err, Usage: s.usage, Turns: s.turns, Calls: s.calls, Next: next}
	s.r.mu.Unlock()
	s.endTrace(e)
	s.endTrace = nil
}
