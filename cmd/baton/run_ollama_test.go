package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
)

// Against Ollama, baton run checks every request against the window the
// server runs it with (num_ctx), not a larger one the workflow declares:
// Ollama drops what does not fit without an error, so a check against
// window_tokens 200000 while the server runs 8192 tokens would let a
// request through that the model never sees whole. The workflow's window
// is what Ollama is asked for, capped by what the model supports.
func TestRunOllamaChecksTheServersWindow(t *testing.T) {
	for _, c := range []struct {
		name          string
		modelContext  int // what /api/show reports
		windowTokens  string
		wantWindow    int
		wantNoteInErr string
	}{
		{"the model supports less than the workflow declares", 8192, "window_tokens: 200000", 8192, "8192"},
		{"the workflow's window is asked for", 131072, "window_tokens: 20000", 20000, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolateEnv(t)
			dir := exampleWorkspace(t)
			wf := filepath.Join(dir, "baton.yaml")
			data, err := os.ReadFile(wf)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(wf, []byte(strings.Replace(string(data), "window_tokens: 200000", c.windowTokens, 1)), 0o644)
			s := llmtest.NewServer(t, finishing())
			s.SetModels("llama3.2:latest")
			s.SetModelContextLength(c.modelContext)
			code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--provider", "ollama", "--base-url", s.URL(), "--model", "llama3.2:latest")
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			if c.wantNoteInErr != "" && !strings.Contains(errOut, c.wantNoteInErr) {
				t.Errorf("stderr says nothing of the smaller window %s:\n%s", c.wantNoteInErr, errOut)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "events.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("run logs: %v", logs)
			}
			events, _, err := runlog.Read(logs[0])
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, e := range events {
				if e.Type == runlog.RunStart || e.Type == runlog.BoundaryEvaluation {
					if e.WindowTokens != c.wantWindow {
						t.Errorf("%s: window_tokens %d, want the server's %d", e.Type, e.WindowTokens, c.wantWindow)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("the run log names no window")
			}
			reqs := s.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the server")
			}
			for _, r := range reqs {
				if r.Path == "/api/chat" && (r.NumCtx != c.wantWindow || r.Truncated) {
					t.Errorf("a request ran with num_ctx %d (truncated %v), want %d", r.NumCtx, r.Truncated, c.wantWindow)
				}
			}
		})
	}
}
