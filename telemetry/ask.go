package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

// Spans returns an orchestrate.Config.Span that makes "plan" and
// "invoke_agent {skill}" spans with tracer.
func Spans(tracer trace.Tracer) func(context.Context, string, *orchestrate.SubtaskResult) (context.Context, func(error)) {
	return func(ctx context.Context, part string, sub *orchestrate.SubtaskResult) (context.Context, func(error)) {
		if sub == nil {
			ctx, span := tracer.Start(ctx, part, trace.WithSpanKind(trace.SpanKindInternal))
			return ctx, func(err error) { endWith(span, err) }
		}
		ctx, span := tracer.Start(ctx, OpInvokeAgent+" "+sub.Skill, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				attribute.String(AttrOperationName, OpInvokeAgent),
				attribute.String(AttrAgentName, sub.Skill),
				attribute.Int(AttrSubtaskIndex, sub.Index),
			))
		return ctx, func(err error) {
			if span.IsRecording() {
				span.SetAttributes(
					attribute.Int(AttrSliceTokens, sub.ContextTokens),
					attribute.Int(AttrPromptTokens, sub.PromptTokens),
				)
				usage(span, sub.Usage)
			}
			endWith(span, err)
		}
	}
}

// StartAsk starts the "invoke_workflow" span of one ask. Its end, given the
// run's record, puts the run's accounting on it: the whole context, what
// was sent, and the two baselines (every sub-agent given the whole context,
// one call with all of it).
func StartAsk(ctx context.Context, tracer trace.Tracer, provider, model string) (context.Context, func(*orchestrate.Record, error)) {
	ctx, span := tracer.Start(ctx, OpInvokeWorkflow+" ask", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String(AttrOperationName, OpInvokeWorkflow),
			attribute.String(AttrWorkflowName, "ask"),
			attribute.String(AttrProviderName, provider),
			attribute.String(AttrRequestModel, model),
		))
	return ctx, func(rec *orchestrate.Record, err error) {
		if rec != nil && span.IsRecording() {
			a := rec.Accounting
			span.SetAttributes(
				attribute.String(AttrRunID, rec.ID),
				attribute.String(AttrPlanner, rec.Planner),
				attribute.Int(AttrSubtasks, len(rec.Subtasks)),
				attribute.Int(AttrContextTokens, a.ContextTokens),
				attribute.Int(AttrNaiveInputTokens, a.NaiveInputTokens),
				attribute.Int(AttrOrchestratedTokens, a.OrchestratedInputTokens),
				attribute.Int(AttrSingleCallInputTokens, a.SingleCallInputTokens),
			)
			usage(span, rec.Usage.Total)
		}
		endWith(span, err)
	}
}

// usage puts u on span in the conventions' terms: input_tokens counts the
// cached tokens too.
func usage(span trace.Span, u llm.Usage) {
	span.SetAttributes(
		attribute.Int64(AttrInputTokens, u.PromptTokens()),
		attribute.Int64(AttrOutputTokens, u.OutputTokens),
		attribute.Int64(AttrCacheReadTokens, u.CacheReadInputTokens),
		attribute.Int64(AttrCacheCreationTokens, u.CacheCreationInputTokens),
	)
}

func endWith(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(attribute.String(AttrErrorType, ErrorType(err)))
		span.SetStatus(codes.Error, llm.ScrubURLs(err.Error()))
	}
	span.End()
}
