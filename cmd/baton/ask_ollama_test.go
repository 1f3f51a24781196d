package main

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// Against Ollama, every request of a run names the window the run checked
// it against (options.num_ctx on the native API), so the server never runs
// one with its 4096-token default and silently drops the start of it.
func TestAskOllamaSendsTheCheckedWindow(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	s.SetModels("llama3.2:latest")
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--provider", "ollama", "--base-url", s.URL(),
		"--planner", "full", "--json", "--no-save", "How long was the outage, why did it happen and what will change?")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if len(rec.Windows) == 0 {
		t.Fatal("the record names no window")
	}
	window := rec.Windows[0].Tokens
	if window != 32768 {
		t.Errorf("window %d, want the Ollama default of 32768", window)
	}
	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	planner := 0
	for _, r := range reqs {
		if r.Path != "/api/chat" || r.NumCtx != window || r.Truncated {
			t.Errorf("request to %s with num_ctx %d (truncated %v), want /api/chat with %d", r.Path, r.NumCtx, r.Truncated, window)
		}
		if strings.Contains(r.System, "You are the planner") {
			planner++
		}
	}
	if planner != 1 {
		t.Errorf("%d planner requests", planner)
	}

	// --window is what Ollama is told, and what the run checks.
	s.Reset()
	code, out, errOut = runBaton(t, "", "ask", "--doc", exampleDoc, "--provider", "ollama", "--base-url", s.URL(),
		"--window", "16000", "--json", "--no-save", "What happened?")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if rec := decodeRecord(t, out); rec.Windows[0].Tokens != 16000 {
		t.Errorf("record window %d", rec.Windows[0].Tokens)
	}
	for _, r := range s.Requests() {
		if r.NumCtx != 16000 {
			t.Errorf("num_ctx %d, want 16000", r.NumCtx)
		}
	}
}
