package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/orchestrate"
)

const (
	incidentDoc = "../examples/incident-report.md"
	fakeSecret  = "sk-test-secret-mcp-4242"
	answerText  = "The outage lasted 3 h 42 min; a retry storm exhausted the pool."
)

// incidentPlan is what a planner might answer for the incident report: one
// lookup answered inline, two analyses pointing at its sections.
const incidentPlan = `{"subtasks": [
 {"task": "How long did the outage last?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "3 h 42 min"},
 {"task": "Explain the retry storm", "skill": "causal_reasoning", "context_pointers": {"sections": ["Retry storm"], "line_ranges": []}},
 {"task": "List the action items", "skill": "fact-extraction", "context_pointers": {"sections": ["9. Action items"], "line_ranges": []}}
], "reasoning": "one lookup, two analyses"}`

// incidentScript plays planner, sub-agents and synthesis.
func incidentScript(answer string) llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(incidentPlan)
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text(answer)
		default:
			return llmtest.Text("finding")
		}
	})
}

// env is a whole environment: only what a test sets is there, and Ollama
// detection asks a port nothing listens on.
func env(vars map[string]string) func(string) string {
	return func(k string) string {
		if k == "OLLAMA_HOST" && vars[k] == "" {
			return "127.0.0.1:1"
		}
		return vars[k]
	}
}

func fakeEnv(s *llmtest.Server) func(string) string {
	return env(map[string]string{"ANTHROPIC_API_KEY": fakeSecret, "ANTHROPIC_BASE_URL": s.AnthropicBaseURL()})
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu   sync.Mutex
	got  []*mcp.ProgressNotificationParams
	seen chan struct{} // one send per notification, never blocking
}

func (p *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.got = append(p.got, req.Params)
	p.mu.Unlock()
	select {
	case p.seen <- struct{}{}:
	default:
	}
}

func (p *progressLog) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), p.got...)
}

// waitFor waits (with a hang guard) until a notification with msg came.
func (p *progressLog) waitFor(t *testing.T, msg string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		for _, n := range p.all() {
			if n.Message == msg {
				return
			}
		}
		select {
		case <-p.seen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no progress notification %q; got %d", msg, len(p.all()))
		}
	}
}

// connectAsk serves a root holding the incident report as incident.md.
func connectAsk(t *testing.T, cfg mcpserver.Config) (*mcp.ClientSession, string, *progressLog) {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	data, err := os.ReadFile(incidentDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Root, "incident.md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Version = "test"
	prog := &progressLog{seen: make(chan struct{}, 1)}
	cs := serve(t, cfg, &mcp.ClientOptions{ProgressNotificationHandler: prog.handle})
	return cs, cfg.Root, prog
}

func callWithProgress(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken("ask-1")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", name, resultText(res))
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, data, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// readRecord reads the record a result names, from under the root.
func readRecord(t *testing.T, root, rel string) (orchestrate.Record, string) {
	t.Helper()
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "..") {
		t.Fatalf("record path %q: want a path under the root", rel)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("run record: %v", err)
	}
	var rec orchestrate.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("run record is not JSON: %v", err)
	}
	return rec, string(data)
}
