package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/provider"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSetupWithoutEndpointIsANoOp(t *testing.T) {
	shutdown, tr, err := Setup(context.Background(), env(map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Start(context.Background(), "x")
	if span.IsRecording() {
		t.Error("a span records without an OTLP endpoint")
	}
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestEnabledAndCapture(t *testing.T) {
	cases := []struct {
		env           map[string]string
		on, capturing bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{EnvEndpoint: " "}, false, false},
		{map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, true, false},
		{map[string]string{EnvTracesEndpoint: "http://127.0.0.1:4318/v1/traces", EnvCaptureContent: "TRUE"}, true, true},
		{map[string]string{EnvCaptureContent: "1"}, false, false},
	}
	for _, c := range cases {
		if Enabled(env(c.env)) != c.on || CaptureContent(env(c.env)) != c.capturing {
			t.Errorf("%v: enabled %v capture %v", c.env, Enabled(env(c.env)), CaptureContent(env(c.env)))
		}
	}
}

// chatModel is a real Anthropic client against llmtest, wrapped as ask
// wraps it: Model outside the retry policy, Attempts inside.
func chatModel(t *testing.T, capture bool, rules ...llmtest.Rule) (llm.Model, *tracetest.InMemoryExporter) {
	s := llmtest.NewServer(t, rules...)
	sel, err := provider.Resolve(context.Background(), provider.Options{Provider: "anthropic", BaseURL: s.AnthropicBaseURL()}, env(map[string]string{"ANTHROPIC_API_KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	m := llm.WithRetry(Attempts(sel.LLM), llm.RetryPolicy{MaxAttempts: 3, Sleep: sleepless})
	return Model(m, tp.Tracer(ScopeName), "anthropic", capture), exp
}

func sleepless(context.Context, time.Duration) error { return nil }

func spanAttrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestChatSpanCapturesContentOnlyWhenAsked(t *testing.T) {
	for _, capture := range []bool{false, true} {
		m, exp := chatModel(t, capture, llmtest.Always(llmtest.Text("the secret answer")))
		req := &llm.Request{Model: "claude-test", System: "sys", Messages: []llm.Message{{Role: llm.RoleUser, Content: "the private prompt"}}, MaxTokens: 50}
		if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		spans := exp.GetSpans()
		if len(spans) != 1 || spans[0].Name != "chat claude-test" {
			t.Fatalf("spans %v", spans)
		}
		a := spanAttrs(spans[0].Attributes)
		in, out := a[AttrInputMessages].AsString(), a[AttrOutputMessages].AsString()
		if capture != strings.Contains(in, "the private prompt") || capture != strings.Contains(out, "the secret answer") {
			t.Errorf("capture %v: input %q output %q", capture, in, out)
		}
	}
}

func TestChatSpanRecordsRetriesAndErrorType(t *testing.T) {
	m, exp := chatModel(t, false, llmtest.Always(llmtest.Fail(503, "api_error", "backend down")))
	req := &llm.Request{Model: "claude-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 50}
	if _, err := m.Generate(context.Background(), req); err == nil {
		t.Fatal("no error from a backend that always fails")
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want one for the logical call", len(spans))
	}
	sp := spans[0]
	if got := spanAttrs(sp.Attributes)[AttrErrorType].AsString(); got != "503" {
		t.Errorf("error.type %q, want 503", got)
	}
	if n := len(sp.Events); n != 3 {
		t.Errorf("%d attempt events, want 3 (every attempt failed)", n)
	}
}

func TestModelIsUnwrappedWhenTracingIsOff(t *testing.T) {
	_, tr, err := Setup(context.Background(), env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	var m llm.Model = attempts{}
	if got := Model(m, tr, "anthropic", true); got != m {
		t.Errorf("Model wrapped %T with tracing off", got)
	}
}
