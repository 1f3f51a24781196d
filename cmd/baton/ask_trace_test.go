package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/telemetry"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every
// ExportTraceServiceRequest posted to /v1/traces and keeps its spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, *httptest.Server) {
	rcv := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || err != nil {
			t.Errorf("receiver got %s %s (%v)", r.Method, r.URL.Path, err)
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("receiver could not decode the export: %v", err)
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rcv.spans = append(rcv.spans, ss.Spans...)
			}
		}
		rcv.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return rcv, srv
}

func attrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func intAttr(t *testing.T, s *tracepb.Span, key string) int64 {
	t.Helper()
	v, ok := attrs(s)[key]
	if !ok {
		t.Errorf("span %q has no %s", s.Name, key)
		return 0
	}
	return v.GetIntValue()
}

// spanUsage reads the GenAI usage of a span back into llm.Usage terms:
// the conventions' input_tokens counts cached tokens too.
func spanUsage(t *testing.T, s *tracepb.Span) llm.Usage {
	t.Helper()
	in := intAttr(t, s, telemetry.AttrInputTokens)
	cr := intAttr(t, s, telemetry.AttrCacheReadTokens)
	cc := intAttr(t, s, telemetry.AttrCacheCreationTokens)
	return llm.Usage{InputTokens: in - cr - cc, OutputTokens: intAttr(t, s, telemetry.AttrOutputTokens), CacheReadInputTokens: cr, CacheCreationInputTokens: cc}
}

func TestAskExportsGenAITraces(t *testing.T) {
	isolateEnv(t)
	rcv, otlp := newOTLPReceiver(t)
	t.Setenv(telemetry.EnvEndpoint, otlp.URL)
	t.Setenv(telemetry.EnvTracesEndpoint, "")
	t.Setenv(telemetry.EnvCaptureContent, "")
	// One sub-agent's first attempt is refused, so that its call span
	// carries a retry event; the synthesis reports cached tokens.
	failOnce := llmtest.Sequence(llmtest.Fail(503, "api_error", "backend down")).WhenContains("Your subtask: Explain the retry storm").Limit(1)
	cached := llmtest.Always(llmtest.Reply{Text: "The outage lasted 3 h 42 min.", Usage: &llm.Usage{InputTokens: 40, OutputTokens: 9, CacheReadInputTokens: 700, CacheCreationInputTokens: 30}}).WhenContains("You are the synthesis step")
	s := llmtest.NewServer(t, failOnce, cached, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())

	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "How long was the outage and why?")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	rec := decodeRecord(t, out)

	rcv.mu.Lock()
	spans := rcv.spans
	rcv.mu.Unlock()
	byName := map[string][]*tracepb.Span{}
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
		byID[string(sp.SpanId)] = sp
	}
	if len(byName["invoke_workflow ask"]) != 1 || len(byName["plan"]) != 1 {
		t.Fatalf("spans received: %v", names(spans))
	}
	root := byName["invoke_workflow ask"][0]
	var chats []*tracepb.Span
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, "chat ") {
			chats = append(chats, sp)
		}
	}
	// Four logical calls (planner, two sub-agents, synthesis), five
	// requests: the retry is an event, not a span.
	if len(chats) != 4 || s.Count() != 5 {
		t.Fatalf("chat spans %d (want 4), requests %d (want 5): %v", len(chats), s.Count(), names(spans))
	}
	checkAskChatSpans(t, chats, root, rec)
	if intAttr(t, root, telemetry.AttrNaiveInputTokens) != int64(rec.Accounting.NaiveInputTokens) ||
		intAttr(t, root, telemetry.AttrSingleCallInputTokens) != int64(rec.Accounting.SingleCallInputTokens) {
		t.Errorf("baselines on the workflow span differ from the record's accounting %+v", rec.Accounting)
	}
	checkAskAgentSpans(t, spans, chats, root, rec)
	if p := byName["plan"][0]; string(p.ParentSpanId) != string(root.SpanId) {
		t.Error("the plan span is not a child of the workflow")
	}
}

// checkAskChatSpans checks each call's span: its attributes, its usage (their
// sum is the record's), the one retry event, all in the ask's trace.
func checkAskChatSpans(t *testing.T, chats []*tracepb.Span, root *tracepb.Span, rec orchestrate.Record) {
	t.Helper()
	var sum llm.Usage
	retries := 0
	for _, c := range chats {
		a := attrs(c)
		if a[telemetry.AttrProviderName].GetStringValue() != "anthropic" || a[telemetry.AttrRequestModel].GetStringValue() != rec.Model || a[telemetry.AttrResponseModel].GetStringValue() == "" {
			t.Errorf("chat span attributes %v", a)
		}
		if fr := a[telemetry.AttrResponseFinish].GetArrayValue(); fr == nil || len(fr.Values) != 1 {
			t.Errorf("finish reasons %v", a[telemetry.AttrResponseFinish])
		}
		if _, ok := a[telemetry.AttrInputMessages]; ok {
			t.Error("message content captured without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
		}
		sum = sum.Add(spanUsage(t, c))
		for _, e := range c.Events {
			if e.Name == telemetry.EventRetry {
				retries++
			}
		}
		// Every call belongs to the ask's trace.
		if string(c.TraceId) != string(root.TraceId) {
			t.Errorf("chat span %q is in another trace", c.Name)
		}
	}
	if sum != rec.Usage.Total {
		t.Errorf("chat spans' usage %+v != record's %+v", sum, rec.Usage.Total)
	}
	if got := spanUsage(t, root); got != rec.Usage.Total {
		t.Errorf("workflow span usage %+v != record's %+v", got, rec.Usage.Total)
	}
	if retries != 1 {
		t.Errorf("retry events %d, want 1", retries)
	}
}

// checkAskAgentSpans checks that each sub-agent's span carries its slice and
// usage, and that its call is its child.
func checkAskAgentSpans(t *testing.T, spans, chats []*tracepb.Span, root *tracepb.Span, rec orchestrate.Record) {
	t.Helper()
	byName := map[string][]*tracepb.Span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
	}
	agents := 0
	for _, sub := range rec.Subtasks {
		if sub.Mode != "delegated" {
			continue
		}
		var sp *tracepb.Span
		for _, a := range byName["invoke_agent "+sub.Skill] {
			if intAttr(t, a, telemetry.AttrSubtaskIndex) == int64(sub.Index) {
				sp = a
			}
		}
		if sp == nil {
			t.Errorf("no invoke_agent span for subtask %d (%s): %v", sub.Index, sub.Skill, names(spans))
			continue
		}
		agents++
		if string(sp.ParentSpanId) != string(root.SpanId) {
			t.Errorf("invoke_agent %d is not a child of the workflow", sub.Index)
		}
		if intAttr(t, sp, telemetry.AttrSliceTokens) != int64(sub.ContextTokens) || spanUsage(t, sp) != sub.Usage {
			t.Errorf("invoke_agent %d: slice %d usage %+v, record %d %+v", sub.Index, intAttr(t, sp, telemetry.AttrSliceTokens), spanUsage(t, sp), sub.ContextTokens, sub.Usage)
		}
		children := 0
		for _, c := range chats {
			if string(c.ParentSpanId) == string(sp.SpanId) {
				children++
			}
		}
		if children != 1 {
			t.Errorf("invoke_agent %d has %d chat children, want 1", sub.Index, children)
		}
	}
	if agents != 2 {
		t.Errorf("%d invoke_agent spans matched, want 2", agents)
	}
}

func names(spans []*tracepb.Span) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// TestAskWithoutOTLPEndpointConnectsNowhere runs an ask with every other
// OTLP variable pointing at a listener, and the default OTLP/HTTP port
// taken by one when it is free: without an endpoint variable, neither may
// see a connection.
func TestAskWithoutOTLPEndpointConnectsNowhere(t *testing.T) {
	isolateEnv(t)
	_, accepted := otlpListeners(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())

	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "task")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	time.Sleep(100 * time.Millisecond) // let a stray connection be accepted
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections were made to OTLP listeners without an endpoint variable", n)
	}
}
