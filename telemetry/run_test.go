package telemetry

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-dev/baton/internal/testws"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/provider"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/workflow"
)

// exampleWorkflow copies the shipped example workflow to a temp folder and
// loads it.
func exampleWorkflow(t *testing.T) *workflow.Workflow {
	t.Helper()
	dst := testws.Copy(t, "../examples/workflow")
	wf, err := workflow.Load(filepath.Join(dst, "baton.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

func assistantTurns(r llmtest.RecordedRequest) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

func call(name string, input any) llm.ToolCall {
	b, _ := json.Marshal(input)
	return llm.ToolCall{Name: name, Input: b}
}

// A resume answers the stopped step's first call and its tool call from
// the journal: the call gets no chat span, only an event with the usage the
// journal recorded; the tool call's span says it was replayed. The run that
// paid for them has their chat and tool spans.
func TestResumedCallsAreNotChatSpans(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		n := assistantTurns(r)
		if strings.Contains(r.System, "# Analyse the request") {
			switch {
			case n == 0:
				return llmtest.Reply{ToolCalls: []llm.ToolCall{call("read_file", map[string]string{"path": "docs/requirements.md"})},
					Usage: &llm.Usage{InputTokens: 900, OutputTokens: 30, CacheReadInputTokens: 100}}
			case n == 1 && down.Load():
				return llmtest.Fail(503, "api_error", "backend down")
			}
		}
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: done")
		}
		return llmtest.CallTools(call("finish", map[string]string{"summary": "step done"}))
	}))
	sel, err := provider.Resolve(context.Background(), provider.Options{Provider: "anthropic", BaseURL: s.AnthropicBaseURL()}, env(map[string]string{"ANTHROPIC_API_KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := tp.Tracer(ScopeName)
	model := Model(llm.WithRetry(Attempts(sel.LLM), llm.RetryPolicy{MaxAttempts: 1, Sleep: sleepless}), tr, "anthropic", true)
	wf := exampleWorkflow(t)
	cfg := runner.Config{Workflow: wf, Model: model, ModelName: sel.Model, Provider: "anthropic", Trace: Run(tr, "anthropic", true)}

	if _, err := runner.Run(context.Background(), cfg); err == nil {
		t.Fatal("the run did not stop at the refused call")
	}
	first := exp.GetSpans()
	exp.Reset()
	down.Store(false)
	res, err := runner.Resume(context.Background(), cfg)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if res.Replayed != 1 || res.ReplayedTools != 1 {
		t.Fatalf("resume replayed %d calls and %d tool calls, want 1 and 1", res.Replayed, res.ReplayedTools)
	}
	resumed := exp.GetSpans()

	count := func(spans tracetest.SpanStubs, prefix string) int {
		n := 0
		for _, sp := range spans {
			if strings.HasPrefix(sp.Name, prefix) {
				n++
			}
		}
		return n
	}
	// The stopped run: two chat spans (the second failed) and the tool
	// call, with its arguments and result captured as asked.
	if count(first, "chat ") != 2 || count(first, "execute_tool read_file") != 1 {
		t.Fatalf("first run's spans: %v", spanNames(first))
	}
	for _, sp := range first {
		a := spanAttrs(sp.Attributes)
		switch {
		case sp.Name == "execute_tool read_file":
			if !strings.Contains(a[AttrToolCallArguments].AsString(), "docs/requirements.md") || a[AttrToolCallResult].AsString() == "" {
				t.Errorf("tool span without captured content: %v", a)
			}
		case strings.HasPrefix(sp.Name, "invoke_workflow"):
			if sp.Status.Code.String() != "Error" || a[AttrResume].AsBool() {
				t.Errorf("stopped run's workflow span: status %v, attributes %v", sp.Status, a)
			}
		}
	}

	var root, analysis *tracetest.SpanStub
	for i, sp := range resumed {
		a := spanAttrs(sp.Attributes)
		switch {
		case strings.HasPrefix(sp.Name, "invoke_workflow"):
			root = &resumed[i]
		case sp.Name == "invoke_agent analyse-request":
			analysis = &resumed[i]
		case sp.Name == "execute_tool read_file":
			if !a[AttrReplayed].AsBool() {
				t.Errorf("the replayed tool call's span is not marked: %v", a)
			}
		case strings.HasPrefix(sp.Name, "chat "):
			if a[AttrInputTokens].AsInt64() == 1000 {
				t.Error("the replayed call has a chat span")
			}
		}
	}
	if root == nil || analysis == nil {
		t.Fatalf("resume's spans: %v", spanNames(resumed))
	}
	ra := spanAttrs(root.Attributes)
	if !ra[AttrResume].AsBool() || ra[AttrReplayedCalls].AsInt64() != 1 || ra[AttrReplayedTools].AsInt64() != 1 {
		t.Errorf("resume's workflow span %v", ra)
	}
	resumeEvents := 0
	for _, e := range root.Events {
		if e.Name == EventResume {
			resumeEvents++
			if spanAttrs(e.Attributes)[AttrLedgerTime].AsString() == "" {
				t.Errorf("resume event without the ledger entry it resumed from: %v", e.Attributes)
			}
		}
	}
	if resumeEvents != 1 {
		t.Errorf("%d resume events on the workflow span", resumeEvents)
	}
	// 4 steps of finish and the report; the analysis step sends one call
	// and answers one from its journal.
	if n := count(resumed, "chat "); n != 4 {
		t.Errorf("%d chat spans on resume, want 4 (one per step, none for the replayed call): %v", n, spanNames(resumed))
	}
	var replayed []map[string]int64
	for _, e := range analysis.Events {
		if e.Name == EventReplayedCall {
			m := map[string]int64{}
			for k, v := range spanAttrs(e.Attributes) {
				m[string(k)] = v.AsInt64()
			}
			replayed = append(replayed, m)
		}
	}
	if len(replayed) != 1 || replayed[0][AttrInputTokens] != 1000 || replayed[0][AttrCacheReadTokens] != 100 || replayed[0][AttrOutputTokens] != 30 {
		t.Errorf("replayed-call events on the analysis step: %v", replayed)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// With tracing off Run is nil: the runner is given no tracer to call.
func TestRunTracerIsNilWhenTracingIsOff(t *testing.T) {
	_, tr, err := Setup(context.Background(), env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if rt := Run(tr, "anthropic", true); rt != nil {
		t.Errorf("Run returned %T with tracing off", rt)
	}
}
