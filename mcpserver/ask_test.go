package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/orchestrate"
)

// ask against the wire-level fake: the answer, the accounting with both
// baselines, a record under the root's .baton/runs that holds no secret,
// and progress from planning to the synthesis, always increasing.
func TestAskAgainstFakeProvider(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	cs, root, prog := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "How long was the outage, why did it happen and what will change?", "documents": []string{"incident.md"}, "planner": "full"}, &out)

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

// Without a provider, ask is an error of one line that says what to set
// (hosts start servers with a reduced environment, and a quiet dry run's
// note may never reach the user), and no run is recorded.
func TestAskWithoutProviderIsAnError(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"nothing set": nil,
		// Claude Code passes "${VAR}" as text when VAR is not set.
		"a placeholder left unexpanded": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}", "OPENAI_API_KEY": " ${OPENAI_API_KEY:-} "},
	} {
		t.Run(name, func(t *testing.T) {
			cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(vars)})
			text := toolError(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}})
			if text != mcpserver.NoProviderMessage {
				t.Errorf("ask without a provider: %q, want %q", text, mcpserver.NoProviderMessage)
			}
			for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "dry_run: true"} {
				if !strings.Contains(text, want) {
					t.Errorf("%q does not name %s", text, want)
				}
			}
			if runs, _ := os.ReadDir(filepath.Join(root, ".baton", "runs")); len(runs) != 0 {
				t.Errorf("%d run records saved for an ask that ran nothing", len(runs))
			}
		})
	}
}

// Without a provider, dry_run: true is the dry run: the plan and the
// estimate, with its record.
func TestAskWithoutProviderDryRunOnRequest(t *testing.T) {
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(nil)})
	var out mcpserver.AskOut
	res := callWithProgress(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}, "dry_run": true, "planner": "full"}, &out)
	if res.IsError || !out.DryRun || out.Status != orchestrate.RunDryRun || out.Answer != "" || !strings.Contains(out.Note, "dry run asked for") {
		t.Errorf("isError %v, dry run %v, status %q, answer %q, note %q", res.IsError, out.DryRun, out.Status, out.Answer, out.Note)
	}
	if len(out.Subtasks) == 0 || out.Planner != orchestrate.PlannerRetrieval || !out.Accounting.Estimate || out.Accounting.NaiveInputTokens == 0 {
		t.Errorf("no plan and estimate: planner %q, subtasks %+v, accounting %+v", out.Planner, out.Subtasks, out.Accounting)
	}
	if rec, _ := readRecord(t, root, out.Record); !rec.DryRun || rec.ID != out.RunID {
		t.Errorf("record: dry run %v, id %q", rec.DryRun, rec.ID)
	}
}

// The status line baton mcp prints at start names the provider and the
// model, never the key, or says that there is none and what to set.
func TestProviderStatus(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	for name, c := range map[string]struct {
		getenv func(string) string
		want   []string
	}{
		"none":        {env(nil), []string{"no model provider found", "dry_run: true", "ANTHROPIC_API_KEY"}},
		"placeholder": {env(map[string]string{"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}), []string{"no model provider found", "ANTHROPIC_API_KEY was passed as the text ${ANTHROPIC_API_KEY}"}},
		"anthropic":   {fakeEnv(fake), []string{"ask calls anthropic model claude-sonnet-4-5", "from ANTHROPIC_API_KEY"}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := mcpserver.New(mcpserver.Config{Root: t.TempDir(), Getenv: c.getenv})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			line := s.ProviderStatus(context.Background())
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("status %q does not say %q", line, w)
				}
			}
			if strings.Contains(line, fakeSecret) || strings.ContainsAny(line, "\r\n") {
				t.Errorf("status %q: shows the key or runs over one line", line)
			}
		})
	}
	if fake.Count() != 0 {
		t.Errorf("the status sent %d model requests", fake.Count())
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

// An answer over the result bound is written to a file under the root,
// and the result that says where stays within the bound.
func TestAskSpillsALargeAnswer(t *testing.T) {
	const bound = 16 << 10
	long := strings.Repeat("The retry storm exhausted the pool. ", 600)
	fake := llmtest.NewServer(t, incidentScript(long))
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake), MaxResultBytes: bound})
	var out mcpserver.AskOut
	res := callWithProgress(t, cs, "ask", map[string]any{"task": "Why?", "documents": []string{"incident.md"}, "planner": "full"}, &out)
	if out.Answer != "" || out.Spilled == nil || out.Spilled.Bytes != len(long) {
		t.Fatalf("answer %d bytes inline, spilled %+v", len(out.Answer), out.Spilled)
	}
	if wire, _ := json.Marshal(res); len(wire) > bound {
		t.Errorf("the result is %d bytes, over the %d-byte bound", len(wire), bound)
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
	p := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "Why?", "documents": []string{"incident.md"}, "planner": "full"}}
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
	callWithProgress(t, cs, "ask", map[string]any{"task": "Compare the plans", "documents": []string{"notes", "incident.md"}, "dry_run": true}, &out)
	rec, _ := readRecord(t, root, out.Record)
	want := []string{"notes/a.md", "notes/a/deep.txt", "notes/b.md", "incident.md"}
	if strings.Join(rec.Documents, ",") != strings.Join(want, ",") {
		t.Errorf("documents %v, want %v", rec.Documents, want)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "t", "documents": []string{"notes/a"}, "dry_run": true}})
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
	callWithProgress(t, cs, "ask", map[string]any{"task": "t", "documents": []string{"docs"}, "dry_run": true}, &out)
	if rec, _ := readRecord(t, root, out.Record); strings.Join(rec.Documents, ",") != "docs/mine.md" {
		t.Errorf("the folder gave %v", rec.Documents)
	}
}

// The window a provider runs with is the one every request is checked
// against: against an Ollama whose model holds 6000 tokens, the whole
// incident report (about 7k) is never sent in one request, and every
// request names that window.
func TestAskChecksTheProvidersWindow(t *testing.T) {
	fake := llmtest.NewServer(t, incidentScript(answerText))
	fake.SetModels("llama3.2:latest")
	fake.SetModelContextLength(6000)
	fake.SetContextWindow(6000)
	cs, _, _ := connectAsk(t, mcpserver.Config{Getenv: env(map[string]string{"OLLAMA_HOST": fake.URL()})})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "How long was the outage and why?", "documents": []string{"incident.md"}}, &out)
	if out.DryRun || out.Accounting.SingleCallFits == nil || *out.Accounting.SingleCallFits || out.Accounting.SingleCallWindow != 6000 {
		t.Errorf("dry run %v, single call fits %v in %d", out.DryRun, out.Accounting.SingleCallFits, out.Accounting.SingleCallWindow)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request sent")
	}
	for _, r := range reqs {
		if r.NumCtx != 6000 || r.Status == 400 || r.Truncated {
			t.Errorf("request with num_ctx %d answered %d (truncated %v): want every one within 6000", r.NumCtx, r.Status, r.Truncated)
		}
	}
}

// A retried call is said in the progress, and the run still answers.
func TestAskRetryIsReportedAsProgress(t *testing.T) {
	limited := llmtest.Sequence(llmtest.RateLimit(time.Second)).WhenContains("Your subtask: Explain the retry storm").Limit(1)
	fake := llmtest.NewServer(t, limited, incidentScript(answerText))
	cs, _, prog := connectAsk(t, mcpserver.Config{Getenv: fakeEnv(fake)})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "Why?", "documents": []string{"incident.md"}, "planner": "full"}, &out)
	if out.Answer != answerText {
		t.Errorf("answer %q", out.Answer)
	}
	prog.waitFor(t, "synthesis done")
	retries := 0
	for _, n := range prog.all() {
		if strings.HasPrefix(n.Message, "attempt 1 failed (") && strings.Contains(n.Message, "retrying in") {
			retries++
		}
		if strings.Contains(n.Message, fakeSecret) {
			t.Errorf("progress quotes the key: %q", n.Message)
		}
	}
	if retries != 1 {
		t.Errorf("%d retry notices in the progress, want 1", retries)
	}
	// The notice was not foreseen in the total, and the total grew by it:
	// the run reaches its total only when it is done.
	ns := prog.all()
	for i, n := range ns[:len(ns)-1] {
		if n.Total > 0 && n.Progress >= n.Total {
			t.Errorf("notification %d (%q) at progress %v of %v before the end", i, n.Message, n.Progress, n.Total)
		}
	}
	if last := ns[len(ns)-1]; last.Message != "synthesis done" || last.Progress != last.Total {
		t.Errorf("last notification %+v", last)
	}
}

// Each record ask saves is handed to OnRecord (baton mcp indexes it in the
// run history) with its full path; an OnRecord failure is a warning of the
// result, never a failed ask.
func TestAskHandsTheRecordOn(t *testing.T) {
	var got []string
	fail := false
	cs, root, _ := connectAsk(t, mcpserver.Config{Getenv: env(nil), OnRecord: func(rec *orchestrate.Record, path string) error {
		got = append(got, rec.ID+" "+path)
		if fail {
			return errors.New("the history is locked")
		}
		return nil
	}})
	var out mcpserver.AskOut
	callWithProgress(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}, "dry_run": true}, &out)
	want := out.RunID + " " + filepath.Join(root, filepath.FromSlash(out.Record))
	if len(got) != 1 || got[0] != want {
		t.Fatalf("OnRecord got %q, want [%q]", got, want)
	}
	fail = true
	res := callWithProgress(t, cs, "ask", map[string]any{"task": "What caused the outage?", "documents": []string{"incident.md"}, "dry_run": true}, &out)
	if res.IsError || len(got) != 2 || !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "the history is locked") }) {
		t.Errorf("an OnRecord failure: isError %v, warnings %q", res.IsError, out.Warnings)
	}
}
