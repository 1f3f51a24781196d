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
	s, err := mcpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.SDK().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	prog := &progressLog{seen: make(chan struct{}, 1)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: prog.handle}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
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

// ask against the wire-level fake: the answer, the accounting with both
// baselines, a record under the root's .baton/runs that holds no secret,
// and progress from planning to the synthesis, always increasing.
func TestAskAgainstFakeProvider(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	cs, root, prog := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "How long was the outage, why did it happen and what will change?", "documents": []string{"incident.md"}}, &out)

	if out.Answer != answerText || out.DryRun || out.Status != orchestrate.RunOK || out.Spilled != nil {
		t.Errorf("answer %q, dry run %v, status %q, spilled %v", out.Answer, out.DryRun, out.Status, out.Spilled)
	}
	if got := fake.Count(); got != 4 {
		t.Errorf("%d requests to the provider, want 4 (planner, two sub-agents, synthesis)", got)
	}
	a := out.Accounting
	if a.ContextTokens == 0 || a.NaiveInputTokens <= a.OrchestratedInputTokens || a.SingleCallInputTokens <= a.ContextTokens || a.SingleCallSavingsRatio == nil || a.Estimate {
		t.Errorf("accounting without its baselines: %+v", a)
	}
	if len(out.Subtasks) != 3 || out.Subtasks[0].Mode != orchestrate.ModeSelf || out.Subtasks[1].ID != 2 || out.Subtasks[1].Status != orchestrate.StatusOK || out.Subtasks[1].Tokens == 0 {
		t.Errorf("subtasks: %+v", out.Subtasks)
	}
	if !strings.HasPrefix(out.Record, mcpserver.RunsDir+"/") {
		t.Errorf("record %q: want it under %s", out.Record, mcpserver.RunsDir)
	}
	rec, raw := readRecord(t, root, out.Record)
	if rec.ID != out.RunID || rec.Answer != answerText || rec.Accounting.NaiveInputTokens != a.NaiveInputTokens || len(rec.Documents) != 1 || rec.Documents[0] != "incident.md" {
		t.Errorf("record %s: id %q, answer %q, documents %v", out.Record, rec.ID, rec.Answer, rec.Documents)
	}
	if strings.Contains(raw, fakeSecret) {
		t.Error("the run record holds the API key")
	}
	if _, err := os.Stat(filepath.Join(root, ".baton", ".gitignore")); err != nil {
		t.Errorf(".baton does not ignore itself: %v", err)
	}

	prog.waitFor(t, "synthesis done")
	ns := prog.all()
	var msgs []string
	for i, n := range ns {
		msgs = append(msgs, n.Message)
		if n.ProgressToken != "ask-1" {
			t.Errorf("notification %d: token %v", i, n.ProgressToken)
		}
		if i > 0 && n.Progress <= ns[i-1].Progress {
			t.Errorf("notification %d: progress %v after %v, want it to increase", i, n.Progress, ns[i-1].Progress)
		}
		if n.Total != 0 && n.Progress > n.Total {
			t.Errorf("notification %d: progress %v over total %v", i, n.Progress, n.Total)
		}
	}
	joined := strings.Join(msgs, "\n")
	for _, want := range []string{"planning", "subtask 2 started: Explain the retry storm", "subtask 3 ok: List the action items", "synthesising the answer"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no progress %q in:\n%s", want, joined)
		}
	}
	if last := ns[len(ns)-1]; last.Message != "synthesis done" || last.Progress != last.Total {
		t.Errorf("last notification %+v: want synthesis done at progress == total", last)
	}
}

// Without a provider the run is a dry run: the plan with a note that says
// what to set, not an error, and its record saved all the same.
func TestAskWithoutProviderIsADryRun(t *testing.T) {
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(nil)})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}}, &out)
	if !out.DryRun || out.Status != orchestrate.RunDryRun || out.Answer != "" {
		t.Errorf("dry run %v, status %q, answer %q", out.DryRun, out.Status, out.Answer)
	}
	if !strings.Contains(out.Note, "ANTHROPIC_API_KEY") || !strings.Contains(out.Note, "dry run") {
		t.Errorf("note %q: want what to set and that it ran as a dry run", out.Note)
	}
	if len(out.Subtasks) == 0 || out.Planner != orchestrate.PlannerRetrieval || !out.Accounting.Estimate || out.Accounting.NaiveInputTokens == 0 {
		t.Errorf("no plan and estimate: planner %q, subtasks %+v, accounting %+v", out.Planner, out.Subtasks, out.Accounting)
	}
	if rec, _ := readRecord(t, root, out.Record); !rec.DryRun || rec.ID != out.RunID {
		t.Errorf("record: dry run %v, id %q", rec.DryRun, rec.ID)
	}
}

// dry_run with a provider configured calls nothing.
func TestAskDryRunCallsNoModel(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	cs, _, _ := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}, "dry_run": true}, &out)
	if !out.DryRun || out.Note == "" || fake.Count() != 0 {
		t.Errorf("dry run %v, note %q, %d requests sent", out.DryRun, out.Note, fake.Count())
	}
}

// An answer over the result bound is written to a file under the root.
func TestAskSpillsALargeAnswer(t *testing.T) {
	long := strings.Repeat("The retry storm exhausted the pool. ", 100)
	fake := llmtest.NewServer(t, incidentScript(long))
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake), MaxResultBytes: 1000})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "Why?", "documents": []string{"incident.md"}}, &out)
	if out.Answer != "" || out.Spilled == nil || out.Spilled.Bytes != len(long) {
		t.Fatalf("answer %d bytes inline, spilled %+v", len(out.Answer), out.Spilled)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(out.Spilled.Path)))
	if err != nil || string(data) != long {
		t.Errorf("spilled answer: %v (%d bytes)", err, len(data))
	}
}

// Bad input is a one-line tool error and no request is sent.
func TestAskRefusesBadInput(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\nnot yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "sibling.md"), []byte("# Sibling\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _, _ := connectAsk(t, mcpserver.Config{Root: root, Getenv: fakeEnv(fake)})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"parent", map[string]any{"task": "t", "documents": []string{"incident.md", "../sibling.md"}}, "../sibling.md"},
		{"absolute", map[string]any{"task": "t", "documents": []string{outside}}, "outside.md"},
		{"no task", map[string]any{"task": " ", "documents": []string{"incident.md"}}, "task is empty"},
		{"no documents", map[string]any{"task": "t", "documents": []string{}}, "no documents"},
		{"planner", map[string]any{"task": "t", "documents": []string{"incident.md"}, "planner": "magic"}, "planner must be"},
		{"concurrency", map[string]any{"task": "t", "documents": []string{"incident.md"}, "concurrency": 1 << 30}, "concurrency must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			msg := resultText(res)
			if !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("isError %v, text %q: want one line naming %q", res.IsError, msg, tc.want)
			}
		})
	}
	if fake.Count() != 0 {
		t.Errorf("%d requests sent for bad input", fake.Count())
	}
}

// Cancelling the request cancels the run: the sub-agents' requests are
// abandoned, and the record of what finished is saved.
func TestAskCancelledWithTheRequest(t *testing.T) {
	fake := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Minute, "late")).WhenContains("Your subtask"), incidentScript(answerText))
	cs, root, prog := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "Why?", "documents": []string{"incident.md"}}}
	p.SetProgressToken(7)
	done := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, p); done <- err }()
	prog.waitFor(t, "subtask 2 started: Explain the retry storm")
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled call returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end when cancelled")
	}
	// The server saves the record as its run ends, after the client has
	// stopped waiting.
	deadline := time.Now().Add(30 * time.Second)
	for {
		entries, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(mcpserver.RunsDir)))
		if len(entries) == 1 {
			rec, _ := readRecord(t, root, mcpserver.RunsDir+"/"+entries[0].Name())
			if rec.Status != orchestrate.RunFailed || !rec.ModelCalled || rec.Plan == nil {
				t.Errorf("record of the cancelled run: status %q, model called %v, plan %v", rec.Status, rec.ModelCalled, rec.Plan != nil)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record saved after the cancel (%d files)", len(entries))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A run the provider ends (a refused key) is a one-line tool error that
// says where the record of it is, and quotes no secret.
func TestAskProviderFailureNamesTheRecord(t *testing.T) {
	fake := llmtest.NewServer(t, llmtest.Always(llmtest.Fail(401, "authentication_error", "invalid x-api-key "+fakeSecret)))
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "Why?", "documents": []string{"incident.md"}}})
	if err != nil {
		t.Fatal(err)
	}
	msg := resultText(res)
	if !res.IsError || strings.Contains(msg, "\n") || strings.Contains(msg, fakeSecret) {
		t.Fatalf("isError %v, text %q", res.IsError, msg)
	}
	_, rel, ok := strings.Cut(msg, "(run record: ")
	if !ok {
		t.Fatalf("%q names no run record", msg)
	}
	rec, raw := readRecord(t, root, strings.TrimSuffix(rel, ")"))
	if rec.Status != orchestrate.RunFailed || rec.Error == "" || strings.Contains(raw, fakeSecret) {
		t.Errorf("record: status %q, error %q, secret in it %v", rec.Status, rec.Error, strings.Contains(raw, fakeSecret))
	}
}

// A folder gives its markdown and text files, in path order, as --doc
// does; hidden files and other kinds are left out.
func TestAskReadsAFolder(t *testing.T) {
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(nil)})
	files := map[string]string{
		"notes/b.md":       "# Beta\n\nThe beta plan.\n",
		"notes/a/deep.txt": "Deep notes.\n",
		"notes/a.md":       "# Alpha\n\nThe alpha plan.\n",
		"notes/.hidden.md": "# Hidden\n",
		"notes/logo.png":   "\x89PNG",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "Compare the plans", "documents": []string{"notes", "incident.md"}}, &out)
	rec, _ := readRecord(t, root, out.Record)
	want := []string{"notes/a.md", "notes/a/deep.txt", "notes/b.md", "incident.md"}
	if strings.Join(rec.Documents, ",") != strings.Join(want, ",") {
		t.Errorf("documents %v, want %v", rec.Documents, want)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "t", "documents": []string{"notes/a"}}})
	if err != nil || res.IsError {
		t.Errorf("a folder of one text file: %v %s", err, resultText(res))
	}
	os.MkdirAll(filepath.Join(root, "empty"), 0o755)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "t", "documents": []string{"empty"}}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "holds no markdown or text files") {
		t.Errorf("an empty folder: %v %s", err, resultText(res))
	}
}

// A symlink out of the root is refused like the path it points at, and a
// folder's walk does not take it.
func TestAskRefusesASymlinkOut(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n\nnot yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(nil)})
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "mine.md"), []byte("# Mine\n"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "docs", "link.md")); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "t", "documents": []string{"link.md"}}})
	if err != nil || !res.IsError || strings.Contains(resultText(res), "\n") {
		t.Errorf("a symlink out of the root: %v, isError %v, %q", err, res.IsError, resultText(res))
	}
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "t", "documents": []string{"docs"}}, &out)
	if rec, _ := readRecord(t, root, out.Record); strings.Join(rec.Documents, ",") != "docs/mine.md" {
		t.Errorf("the folder gave %v", rec.Documents)
	}
}
