package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-dev/baton/llm"
)

// Model wraps m so that every call is a "chat {model}" client span with the
// request, the response and the provider's usage as GenAI attributes.
// Compose it outside the retry policy, so that one span is one logical call
// and its retries are events on it (see Attempts).
// With the no-op tracer Setup returns when tracing is off, m is returned
// as it is: no span, no attribute is built per call.
func Model(m llm.Model, tracer trace.Tracer, provider string, captureContent bool) llm.Model {
	if _, off := tracer.(noop.Tracer); off {
		return m
	}
	return &model{m: m, t: tracer, provider: provider, capture: captureContent}
}

type model struct {
	m        llm.Model
	t        trace.Tracer
	provider string
	capture  bool
}

func (w *model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpChat),
		attribute.String(AttrProviderName, w.provider),
		attribute.String(AttrRequestModel, req.Model),
		attribute.Int(AttrRequestMaxTokens, req.MaxTokens),
	}
	if req.Temperature != nil {
		attrs = append(attrs, attribute.Float64(AttrRequestTemperature, *req.Temperature))
	}
	ctx, span := w.t.Start(ctx, OpChat+" "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	if w.capture && span.IsRecording() {
		span.SetAttributes(attribute.String(AttrSystemInstructions, req.System), attribute.String(AttrInputMessages, inputMessages(req)))
	}
	resp, err := w.m.Generate(ctx, req)
	if resp != nil {
		u := resp.Usage
		span.SetAttributes(
			attribute.String(AttrResponseModel, resp.Model),
			attribute.String(AttrResponseID, resp.ID),
			attribute.StringSlice(AttrResponseFinish, []string{resp.StopReason}),
			// The conventions count cached tokens in input_tokens;
			// llm.Usage keeps them apart, as Anthropic does.
			attribute.Int64(AttrInputTokens, u.PromptTokens()),
			attribute.Int64(AttrOutputTokens, u.OutputTokens),
			attribute.Int64(AttrCacheReadTokens, u.CacheReadInputTokens),
			attribute.Int64(AttrCacheCreationTokens, u.CacheCreationInputTokens),
			attribute.Int(AttrAttempts, resp.Attempts),
		)
		if w.capture && span.IsRecording() {
			span.SetAttributes(attribute.String(AttrOutputMessages, outputMessages(resp)))
		}
	}
	if err != nil {
		span.SetAttributes(attribute.String(AttrErrorType, ErrorType(err)))
		span.SetStatus(codes.Error, llm.ScrubURLs(err.Error()))
	}
	return resp, err
}

// ErrorType is the low-cardinality error.type of err: the provider's HTTP
// status when it has one, else the Go type of the error.
func ErrorType(err error) string {
	var pe *llm.ProviderError
	if errors.As(err, &pe) && pe.StatusCode != 0 {
		return fmt.Sprint(pe.StatusCode)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return fmt.Sprintf("%T", err)
}

// Attempts wraps m, the model inside the retry policy, so that every failed
// attempt is an event on the chat span of the call it belongs to (the span
// in ctx, started by Model outside the policy). Without a recording span it
// adds nothing but one check.
func Attempts(m llm.Model) llm.Model { return attempts{m} }

type attempts struct{ m llm.Model }

func (a attempts) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	t0 := time.Now()
	resp, err := a.m.Generate(ctx, req)
	if span := trace.SpanFromContext(ctx); err != nil && span.IsRecording() {
		span.AddEvent(EventRetry, trace.WithAttributes(
			attribute.String(AttrErrorType, ErrorType(err)),
			attribute.String("exception.message", llm.ScrubURLs(err.Error())),
			attribute.Int64("baton.attempt.duration_ms", time.Since(t0).Milliseconds()),
		))
	}
	return resp, err
}

type part struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

type message struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

// inputMessages is the request's messages in the conventions' JSON shape.
func inputMessages(req *llm.Request) string {
	ms := make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		ms = append(ms, message{Role: string(m.Role), Parts: []part{{Type: "text", Content: m.Content}}})
	}
	b, _ := json.Marshal(ms)
	return string(b)
}

func outputMessages(resp *llm.Response) string {
	b, _ := json.Marshal([]message{{Role: "assistant", Parts: []part{{Type: "text", Content: resp.Text}}}})
	return string(b)
}
