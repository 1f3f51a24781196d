package telemetry

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// Run returns the runner.Config.Trace of baton run and resume: an
// "invoke_workflow {workflow}" span for the run, "invoke_agent {skill}" per
// step and per sub-agent, "execute_tool {name}" per tool call, and the run
// log's resets, boundary evaluations and replayed calls as events on the
// span they happen in. The model calls are the "chat" spans of Model, which
// wraps the run's model. With the no-op tracer Setup returns when tracing is
// off, Run returns nil and the runner calls nothing.
//
// A call a resume answers from the step's journal is not sent and not paid
// for: it gets no chat span (a backend summing the chat spans' usage would
// count it twice, once in the run that paid for it), but an event on its
// agent's span with the usage the journal recorded. A tool call answered
// from the journal did not run either; its execute_tool span is kept, so a
// resumed step shows every call of its session, and carries
// baton.replayed=true.
func Run(tracer trace.Tracer, provider string, captureContent bool) runner.Tracer {
	if _, off := tracer.(noop.Tracer); off {
		return nil
	}
	return &runSpans{t: tracer, provider: provider, capture: captureContent}
}

type runSpans struct {
	t        trace.Tracer
	provider string
	capture  bool
}

func (s *runSpans) Start(ctx context.Context, p runner.Part) (context.Context, func(runner.End)) {
	switch p.Kind {
	case runner.PartRun:
		return s.startRun(ctx, p)
	case runner.PartTool:
		return s.startTool(ctx, p)
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrAgentName, p.Skill),
		attribute.String(AttrRunID, p.RunID),
		attribute.Int(AttrStepID, p.Step),
		attribute.String(AttrPhase, p.Phase),
	}
	if s.provider != "" {
		// A step run by an external agent (--agent-cmd) has none.
		attrs = append(attrs, attribute.String(AttrProviderName, s.provider))
	}
	if p.Kind == runner.PartSubagent {
		attrs = append(attrs, attribute.Int(AttrSubagentIndex, p.Agent), attribute.Int(AttrSubagents, p.Agents))
		if s.capture {
			attrs = append(attrs, attribute.String(AttrSubagentGoal, p.Goal))
		}
	}
	ctx, span := s.t.Start(ctx, OpInvokeAgent+" "+p.Skill, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(e runner.End) {
		if p.Kind == runner.PartStep && span.IsRecording() {
			span.SetAttributes(attribute.Int(AttrTurns, e.Turns), attribute.Int(AttrCalls, e.Calls))
			if e.Next != "" {
				span.SetAttributes(attribute.String(AttrNextSkill, e.Next))
			}
			usage(span, e.Usage)
		}
		endWith(span, e.Err)
	}
}

func (s *runSpans) startRun(ctx context.Context, p runner.Part) (context.Context, func(runner.End)) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeWorkflow),
		attribute.String(AttrWorkflowName, p.Workflow),
		attribute.String(AttrRunID, p.RunID),
		attribute.Bool(AttrResume, p.Resume),
	}
	if s.provider != "" {
		attrs = append(attrs, attribute.String(AttrProviderName, s.provider))
	}
	if p.Model != "" {
		attrs = append(attrs, attribute.String(AttrRequestModel, p.Model))
	}
	ctx, span := s.t.Start(ctx, OpInvokeWorkflow+" "+p.Workflow, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(e runner.End) {
		if r := e.Result; r != nil && span.IsRecording() {
			span.SetAttributes(
				attribute.Int(AttrSteps, r.Steps),
				attribute.Int(AttrResets, r.Resets),
				attribute.Int(AttrReplayedCalls, r.Replayed),
				attribute.Int(AttrReplayedTools, r.ReplayedTools),
			)
			usage(span, r.Usage)
		}
		endWith(span, e.Err)
	}
}

func (s *runSpans) startTool(ctx context.Context, p runner.Part) (context.Context, func(runner.End)) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, p.Call.Name),
		attribute.String(AttrToolCallID, p.Call.ID),
		attribute.String(AttrToolType, "function"),
	}
	if p.Replayed {
		attrs = append(attrs, attribute.Bool(AttrReplayed, true))
	}
	if s.capture {
		attrs = append(attrs, attribute.String(AttrToolCallArguments, string(p.Call.Input)))
	}
	ctx, span := s.t.Start(ctx, OpExecuteTool+" "+p.Call.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(e runner.End) {
		if p.Replayed && e.Calls > 0 {
			// A replayed delegate_task or dispatch_agents: its sub-agents'
			// calls came from the journal with it.
			span.SetAttributes(attribute.Int(AttrReplayedCalls, e.Calls))
		}
		if e.Err == nil && e.Tool != nil && e.Tool.IsError {
			// The tool refused or failed: the model gets the error as the
			// call's result, and the span says so.
			span.SetAttributes(attribute.String(AttrErrorType, "tool_error"))
			span.SetStatus(codes.Error, textclip.Runes(e.Tool.Content, 200))
		}
		if s.capture && e.Tool != nil && span.IsRecording() {
			span.SetAttributes(attribute.String(AttrToolCallResult, e.Tool.Content))
		}
		endWith(span, e.Err)
	}
}

// Event puts the run log's event e on the span in ctx.
func (s *runSpans) Event(ctx context.Context, e runlog.Event) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	var name string
	var attrs []attribute.KeyValue
	add := func(kvs ...attribute.KeyValue) { attrs = append(attrs, kvs...) }
	if e.Phase != "" {
		add(attribute.String(AttrPhase, e.Phase))
	}
	switch e.Type {
	case runlog.Reset:
		name = EventReset
		add(attribute.String(AttrResetReason, e.Reason), attribute.Int(AttrContextTokens, e.ContextTokens),
			attribute.Int(AttrThresholdTokens, e.ThresholdTokens), attribute.Int(AttrWindowTokens, e.WindowTokens),
			attribute.Float64(AttrContextFraction, e.ContextFraction))
	case runlog.BoundaryEvaluation:
		name = EventBoundary
		add(attribute.String(AttrBoundaryOutcome, e.Decision), attribute.String(AttrNextPhase, e.NextPhase),
			attribute.Int(AttrProjectedTokens, e.ProjectedTokens), attribute.Int(AttrThresholdTokens, e.ThresholdTokens),
			attribute.Int(AttrWindowTokens, e.WindowTokens), attribute.Float64(AttrContextFraction, e.ContextFraction))
	case runlog.ThresholdCrossed:
		name = EventThreshold
		add(attribute.Int(AttrProjectedTokens, e.ProjectedTokens), attribute.Int(AttrThresholdTokens, e.ThresholdTokens),
			attribute.Int(AttrWindowTokens, e.WindowTokens))
	case runlog.MissNote:
		name = EventLedgerMiss
		add(attribute.Int(AttrMisses, e.Misses))
	case runlog.Resume:
		name = EventResume
		add(attribute.String(AttrAgentName, e.Skill))
	case runlog.ModelCall:
		name = EventReplayedCall
		add(attribute.String(AttrRequestModel, e.Model))
		if u := e.Usage; u != nil {
			add(attribute.Int64(AttrInputTokens, int64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens)),
				attribute.Int(AttrOutputTokens, u.OutputTokens),
				attribute.Int(AttrCacheReadTokens, u.CacheReadTokens),
				attribute.Int(AttrCacheCreationTokens, u.CacheWriteTokens))
		}
	default:
		return
	}
	if !e.LedgerTime.IsZero() {
		// The ledger entry's time is its id: `baton ledger` and the run
		// log name an entry by it.
		add(attribute.String(AttrLedgerTime, e.LedgerTime.UTC().Format(time.RFC3339)))
	}
	if e.Step != "" {
		if n, err := strconv.Atoi(e.Step); err == nil {
			add(attribute.Int(AttrStepID, n))
		}
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}
