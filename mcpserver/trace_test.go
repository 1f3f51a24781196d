package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/telemetry"
)

// Every ask call is its own trace, as one baton ask is: a workflow span
// with the record's usage, and one chat span per model call whose usage
// adds up to it; a retried attempt is an event on its call's span. The
// server's one tracer serves every call.
func TestAskCallsAreTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	failOnce := llmtest.Sequence(llmtest.Fail(503, "api_error", "backend down")).WhenSystem("You are the synthesis step").Limit(1)
	fake := llmtest.NewServer(t, failOnce, incidentScript(answerText))
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake), Tracer: tp.Tracer(telemetry.ScopeName)})

	var records []string
	for range 2 {
		var out mcpserver.AskOut
		callWithProgress(t, cs, "ask", map[string]any{"task": "How long was the outage?", "documents": []string{"incident.md"}, "planner": "full"}, &out)
		records = append(records, out.Record)
	}
	spans := exp.GetSpans()
	roots := map[string]tracetest.SpanStub{}
	for _, sp := range spans {
		if sp.Name == "invoke_workflow ask" {
			roots[sp.SpanContext.TraceID().String()] = sp
		}
	}
	if len(roots) != 2 {
		t.Fatalf("%d ask traces for two calls: %v", len(roots), names(spans))
	}
	retries := 0
	for i, rel := range records {
		rec, _ := readRecord(t, root, rel)
		var want llm.Usage
		var sum llm.Usage
		var rootSpan *tracetest.SpanStub
		for _, r := range roots {
			if attr(r.Attributes, telemetry.AttrRunID).AsString() == rec.ID {
				rootSpan = &r
			}
		}
		if rootSpan == nil {
			t.Fatalf("ask %d (%s): no workflow span names its run", i+1, rec.ID)
		}
		if want = rec.Usage.Total; want.InputTokens == 0 || want.OutputTokens == 0 {
			t.Fatalf("ask %d: the record's usage %+v is empty; nothing to compare", i+1, want)
		}
		chats := 0
		for _, sp := range spans {
			if !strings.HasPrefix(sp.Name, "chat ") || sp.SpanContext.TraceID() != rootSpan.SpanContext.TraceID() {
				continue
			}
			chats++
			sum = sum.Add(usageOf(sp.Attributes))
			for _, e := range sp.Events {
				if e.Name == telemetry.EventRetry {
					retries++
				}
			}
		}
		if chats != 4 || sum != want || usageOf(rootSpan.Attributes) != want {
			t.Errorf("ask %d: %d chat spans (want 4) with usage %+v; workflow span %+v; record %+v", i+1, chats, sum, usageOf(rootSpan.Attributes), want)
		}
	}
	if retries != 1 {
		t.Errorf("%d retry events, want 1", retries)
	}
}

func attr(kvs []attribute.KeyValue, key string) attribute.Value {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func usageOf(kvs []attribute.KeyValue) llm.Usage {
	cr, cc := attr(kvs, telemetry.AttrCacheReadTokens).AsInt64(), attr(kvs, telemetry.AttrCacheCreationTokens).AsInt64()
	return llm.Usage{InputTokens: attr(kvs, telemetry.AttrInputTokens).AsInt64() - cr - cc, OutputTokens: attr(kvs, telemetry.AttrOutputTokens).AsInt64(),
		CacheReadInputTokens: cr, CacheCreationInputTokens: cc}
}

func names(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}
