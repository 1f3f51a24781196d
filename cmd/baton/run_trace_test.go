package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/telemetry"
)

// resetScript plays the example workflow as workScript does, except that
// the analysis session reads a file that is not there (a failed tool call)
// and reports a context past the reset threshold with its dispatch, so the
// budget resets it mid-step; the fresh session records the decision and
// finishes.
func resetScript(r llmtest.RecordedRequest) llmtest.Reply {
	if r.ToolChoiceName == "write_ledger" {
		return llmtest.CallTools(toolCall("write_ledger", map[string]any{
			"frozen_decisions": []string{"add a --shout flag (docs/requirements.md:3)"},
			"done_so_far":      []any{map[string]string{"text": "read the requirements", "evidence": "docs/requirements.md:1"}},
			"artifacts":        []string{"specs/analysis.md"},
			"current_phase":    "analysis",
			"next_step":        "record the decision and finish",
			"open_tickets":     []string{},
		}))
	}
	if strings.Contains(r.System, "# Analyse the request") {
		n := rounds(r)
		if strings.Contains(r.Messages[0].Content, "## Ledger —") {
			if n == 0 {
				return llmtest.CallTools(toolCall("update_state", map[string]any{"decision": map[string]string{"decision": "flag named --shout", "evidence": "docs/requirements.md:3"}}))
			}
			return llmtest.CallTools(toolCall("finish", map[string]string{"summary": "analysis written"}))
		}
		switch n {
		case 0:
			return llmtest.CallTools(toolCall("read_file", map[string]string{"path": "docs/requirements.md"}),
				toolCall("read_file", map[string]string{"path": "docs/no-such-file.md"}),
				toolCall("write_file", map[string]string{"path": "specs/analysis.md", "content": "# Analysis\nAdd --shout.\n"}))
		case 1:
			reply := workScript(r)
			reply.Usage = &llm.Usage{InputTokens: 150_000, OutputTokens: 40}
			return reply
		}
	}
	return workScript(r)
}

// runLog reads the run's events.jsonl and the tool calls its step journals
// recorded (by call id).
func runLog(t *testing.T, dir string) (events []runlog.Event, journalled []string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "events.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("%d run logs, want 1", len(logs))
	}
	events, problems, err := runlog.Read(logs[0])
	if err != nil || len(problems) > 0 {
		t.Fatalf("run log: %v %v", err, problems)
	}
	journals, _ := filepath.Glob(filepath.Join(filepath.Dir(logs[0]), "steps", "*.jsonl"))
	for _, j := range journals {
		f, err := os.Open(j)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var line struct {
				Rec struct {
					Kind string
					Tool *struct {
						Result llm.ToolResult
					}
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("journal %s: %v", j, err)
			}
			if line.Rec.Kind == "tool" {
				journalled = append(journalled, line.Rec.Tool.Result.CallID)
			}
		}
		f.Close()
	}
	return events, journalled
}

func received(rcv *otlpReceiver) (spans []*tracepb.Span, byID map[string]*tracepb.Span) {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	byID = map[string]*tracepb.Span{}
	for _, sp := range rcv.spans {
		byID[string(sp.SpanId)] = sp
	}
	return slices.Clone(rcv.spans), byID
}

func strAttr(s *tracepb.Span, key string) string { return attrs(s)[key].GetStringValue() }

func eventAttrs(e *tracepb.Span_Event) map[string]int64 {
	m := map[string]int64{}
	for _, kv := range e.Attributes {
		m[kv.Key] = kv.Value.GetIntValue()
	}
	return m
}

// runSpans are the spans a run exported, by kind, and the run log's events
// they are held against.
type runSpans struct {
	all                            []*tracepb.Span
	byID                           map[string]*tracepb.Span
	root                           *tracepb.Span
	steps, subagents, tools, chats []*tracepb.Span
	events                         []runlog.Event
	journalled                     []string // tool call ids of the step journals
	starts, boundaries, resets     []runlog.Event
	calls                          []llm.Usage // the run log's model_call usage
}

// collectRunSpans sorts the spans received by kind and the run log's events
// by type.
func collectRunSpans(t *testing.T, rcv *otlpReceiver, dir string) *runSpans {
	t.Helper()
	r := &runSpans{}
	r.events, r.journalled = runLog(t, dir)
	r.all, r.byID = received(rcv)
	for _, sp := range r.all {
		switch op := strAttr(sp, telemetry.AttrOperationName); {
		case op == telemetry.OpInvokeWorkflow:
			if r.root != nil {
				t.Fatalf("two workflow spans: %v", names(r.all))
			}
			r.root = sp
		case op == telemetry.OpInvokeAgent && attrs(sp)[telemetry.AttrSubagentIndex] != nil:
			r.subagents = append(r.subagents, sp)
		case op == telemetry.OpInvokeAgent:
			r.steps = append(r.steps, sp)
		case op == telemetry.OpExecuteTool:
			r.tools = append(r.tools, sp)
		case op == telemetry.OpChat:
			r.chats = append(r.chats, sp)
		}
	}
	for _, e := range r.events {
		switch e.Type {
		case runlog.StepStart:
			r.starts = append(r.starts, e)
		case runlog.BoundaryEvaluation:
			r.boundaries = append(r.boundaries, e)
		case runlog.Reset:
			r.resets = append(r.resets, e)
		case runlog.ModelCall:
			r.calls = append(r.calls, llm.Usage{InputTokens: int64(e.Usage.InputTokens), OutputTokens: int64(e.Usage.OutputTokens),
				CacheReadInputTokens: int64(e.Usage.CacheReadTokens), CacheCreationInputTokens: int64(e.Usage.CacheWriteTokens)})
		}
	}
	return r
}

func TestRunExportsGenAITraces(t *testing.T) {
	isolateEnv(t)
	rcv, otlp := newOTLPReceiver(t)
	t.Setenv(telemetry.EnvEndpoint, otlp.URL)
	t.Setenv(telemetry.EnvTracesEndpoint, "")
	t.Setenv(telemetry.EnvCaptureContent, "")
	dir := exampleWorkspace(t)
	// The plan step's first attempt is refused once: its call span
	// carries a retry event.
	failOnce := llmtest.Sequence(llmtest.Fail(503, "api_error", "backend down")).WhenSystem("# Plan").Limit(1)
	s := llmtest.NewServer(t, failOnce, llmtest.Func(resetScript))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())

	code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"), "--concurrency", "1")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	r := collectRunSpans(t, rcv, dir)
	if r.root == nil || r.root.Name != "invoke_workflow greet-shout-flag" {
		t.Fatalf("no workflow span: %v", names(r.all))
	}
	runID := r.events[0].Run
	if strAttr(r.root, telemetry.AttrRunID) != runID || strAttr(r.root, telemetry.AttrWorkflowName) != "greet-shout-flag" || strAttr(r.root, telemetry.AttrProviderName) != "anthropic" {
		t.Errorf("workflow span attributes %v", attrs(r.root))
	}
	checkStepSpans(t, r)
	checkChatSpans(t, r)
	checkToolSpans(t, r)
	checkResetEvents(t, r)
	if intAttr(t, r.root, telemetry.AttrSteps) != 4 || intAttr(t, r.root, telemetry.AttrResets) != 1 {
		t.Errorf("workflow span: steps %d resets %d", intAttr(t, r.root, telemetry.AttrSteps), intAttr(t, r.root, telemetry.AttrResets))
	}
	var total llm.Usage
	for _, u := range r.calls {
		total = total.Add(u)
	}
	if got := spanUsage(t, r.root); got != total {
		t.Errorf("workflow span usage %+v, run log's calls %+v", got, total)
	}
}

// checkStepSpans: each step of the run log has one invoke_agent span under
// the workflow.
func checkStepSpans(t *testing.T, r *runSpans) {
	t.Helper()
	if len(r.steps) != len(r.starts) || len(r.starts) != 4 {
		t.Fatalf("%d step spans for %d steps in the run log (want 4): %v", len(r.steps), len(r.starts), names(r.all))
	}
	for i, e := range r.starts {
		at := slices.IndexFunc(r.steps, func(sp *tracepb.Span) bool { return intAttr(t, sp, telemetry.AttrStepID) == int64(i+1) })
		if at < 0 {
			t.Errorf("no span for step %d (%s)", i+1, e.Skill)
			continue
		}
		sp := r.steps[at]
		if strAttr(sp, telemetry.AttrPhase) != e.Phase || strAttr(sp, telemetry.AttrAgentName) != e.Skill {
			t.Errorf("step %d: span's phase %q and agent %q, run log's %q and %q", i+1, strAttr(sp, telemetry.AttrPhase), strAttr(sp, telemetry.AttrAgentName), e.Phase, e.Skill)
		}
		if sp.Name != "invoke_agent "+e.Skill || string(sp.ParentSpanId) != string(r.root.SpanId) || string(sp.TraceId) != string(r.root.TraceId) {
			t.Errorf("step %d (%s): span %q is not a child of the workflow", i+1, e.Skill, sp.Name)
		}
		if e.Step != strconv.Itoa(i+1) {
			t.Errorf("run log's step %d is numbered %q", i+1, e.Step)
		}
	}
}

// checkChatSpans: the chat spans' usage is the run log's model_call usage,
// call by call; the retry is an event, not a span.
func checkChatSpans(t *testing.T, r *runSpans) {
	t.Helper()
	var spanned []llm.Usage
	retries := 0
	for _, c := range r.chats {
		spanned = append(spanned, spanUsage(t, c))
		for _, e := range c.Events {
			if e.Name == telemetry.EventRetry {
				retries++
			}
		}
		parent := r.byID[string(c.ParentSpanId)]
		if parent == nil || strAttr(parent, telemetry.AttrOperationName) != telemetry.OpInvokeAgent {
			t.Errorf("chat span %q is not a child of an agent span", c.Name)
		}
		if _, ok := attrs(c)[telemetry.AttrInputMessages]; ok {
			t.Error("message content captured without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
		}
	}
	sortUsage := func(us []llm.Usage) []string {
		var ks []string
		for _, u := range us {
			b, _ := json.Marshal(u)
			ks = append(ks, string(b))
		}
		slices.Sort(ks)
		return ks
	}
	if len(r.calls) == 0 || !slices.Equal(sortUsage(spanned), sortUsage(r.calls)) {
		t.Errorf("chat spans' usage\n%v\nrun log's model calls\n%v", sortUsage(spanned), sortUsage(r.calls))
	}
	if retries != 1 {
		t.Errorf("%d retry events, want 1", retries)
	}
}

// checkToolSpans: each tool call of the journals has one execute_tool span,
// in the span of the agent that made it; the two sub-agents run under their
// dispatch_agents call.
func checkToolSpans(t *testing.T, r *runSpans) {
	t.Helper()
	byCall := map[string][]*tracepb.Span{}
	failed := 0
	for _, sp := range r.tools {
		id := strAttr(sp, telemetry.AttrToolCallID)
		byCall[id] = append(byCall[id], sp)
		if sp.Name != "execute_tool "+strAttr(sp, telemetry.AttrToolName) {
			t.Errorf("tool span %q names %q", sp.Name, strAttr(sp, telemetry.AttrToolName))
		}
		if _, ok := attrs(sp)[telemetry.AttrToolCallArguments]; ok {
			t.Error("tool arguments captured without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
		}
		if strAttr(sp, telemetry.AttrErrorType) == "tool_error" {
			failed++
		}
		parent := r.byID[string(sp.ParentSpanId)]
		if parent == nil || strAttr(parent, telemetry.AttrOperationName) != telemetry.OpInvokeAgent {
			t.Errorf("tool span %q is not a child of an agent span", sp.Name)
		}
	}
	if len(r.journalled) == 0 || len(r.tools) != len(r.journalled) {
		t.Errorf("%d execute_tool spans for %d journalled tool calls", len(r.tools), len(r.journalled))
	}
	for _, id := range r.journalled {
		if len(byCall[id]) != 1 {
			t.Errorf("journalled tool call %q has %d execute_tool spans", id, len(byCall[id]))
		}
	}
	if failed != 1 {
		t.Errorf("%d tool spans with error.type tool_error, want 1 (the read of a missing file)", failed)
	}
	if len(r.subagents) != 2 {
		t.Fatalf("%d sub-agent spans, want 2: %v", len(r.subagents), names(r.all))
	}
	for _, sp := range r.subagents {
		parent := r.byID[string(sp.ParentSpanId)]
		if parent == nil || parent.Name != "execute_tool dispatch_agents" || intAttr(t, sp, telemetry.AttrSubagents) != 2 {
			t.Errorf("sub-agent span %q: parent %v", sp.Name, parent)
		}
	}
}

// checkResetEvents: the mid-step reset is an event on the analysis step's
// span, with the run log's figures and ledger entry; each boundary
// evaluation is one on the workflow's.
func checkResetEvents(t *testing.T, r *runSpans) {
	t.Helper()
	if len(r.resets) != 1 || r.resets[0].Reason != runlog.ReasonThreshold {
		t.Fatalf("run log resets %+v, want one threshold reset", r.resets)
	}
	at := slices.IndexFunc(r.steps, func(sp *tracepb.Span) bool { return strAttr(sp, telemetry.AttrAgentName) == "analyse-request" })
	if at < 0 {
		t.Fatal("no span for the analysis step")
	}
	analysis := r.steps[at]
	var resetEv *tracepb.Span_Event
	for _, e := range analysis.Events {
		if e.Name == telemetry.EventReset {
			resetEv = e
		}
	}
	if resetEv == nil {
		t.Fatalf("no reset event on the analysis step: %v", analysis.Events)
	}
	ra := eventAttrs(resetEv)
	var reason, ledgerTime string
	for _, kv := range resetEv.Attributes {
		switch kv.Key {
		case telemetry.AttrResetReason:
			reason = kv.Value.GetStringValue()
		case telemetry.AttrLedgerTime:
			ledgerTime = kv.Value.GetStringValue()
		}
	}
	reset := r.resets[0]
	if reason != "threshold" || ra[telemetry.AttrContextTokens] != int64(reset.ContextTokens) || ra[telemetry.AttrContextTokens] < 150_000 ||
		ra[telemetry.AttrThresholdTokens] != 130_000 || ra[telemetry.AttrWindowTokens] != 200_000 ||
		ledgerTime != reset.LedgerTime.UTC().Format(time.RFC3339) {
		t.Errorf("reset event %v %v, run log's reset %+v", reason, ra, reset)
	}
	nb := 0
	for _, e := range r.root.Events {
		if e.Name == telemetry.EventBoundary {
			nb++
		}
	}
	if nb != len(r.boundaries) || nb == 0 {
		t.Errorf("%d boundary events on the workflow span, %d evaluations in the run log", nb, len(r.boundaries))
	}
}

// otlpListeners listens where an exporter could connect without an endpoint
// variable (a port the other OTLP variables name, and the default
// OTLP/HTTP port when it is free), and counts the connections.
func otlpListeners(t *testing.T) (url string, accepted *atomic.Int32) {
	t.Helper()
	accepted = new(atomic.Int32)
	listen := func(addr string) net.Listener {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		return ln
	}
	ln := listen("127.0.0.1:0")
	if ln == nil {
		t.Fatal("no listener")
	}
	listen("127.0.0.1:4318") // the exporter's default; busy is fine
	url = "http://" + ln.Addr().String()
	t.Setenv(telemetry.EnvEndpoint, "")
	t.Setenv(telemetry.EnvTracesEndpoint, "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", url)
	t.Setenv(telemetry.EnvCaptureContent, "true")
	return url, accepted
}

func TestRunWithoutOTLPEndpointConnectsNowhere(t *testing.T) {
	isolateEnv(t)
	_, accepted := otlpListeners(t)
	dir := exampleWorkspace(t)
	s := llmtest.NewServer(t, llmtest.Func(resetScript))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"))
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	time.Sleep(100 * time.Millisecond) // let a stray connection be accepted
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections were made to OTLP listeners without an endpoint variable", n)
	}
}
