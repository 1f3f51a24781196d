package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

func eventsOf(t *testing.T, dir, id string) []runlog.Event {
	t.Helper()
	ev, _, err := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// A session that answers the ledger request with an incomplete entry gets a
// miss note; the second miss in a row forces the reset with the entry baton
// composes, and no reset ever happens without a complete entry on disk.
func TestTwoMissesForceAReset(t *testing.T) {
	dir := copyExample(t)
	big := &llm.Usage{InputTokens: 150_000}
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.ToolChoiceName == "write_ledger" {
			// No next step and no evidence: incomplete.
			return llmtest.CallTools(call("x", "write_ledger", map[string]any{
				"frozen_decisions": []string{}, "done_so_far": []any{map[string]string{"text": "something", "evidence": ""}},
				"artifacts": []string{}, "current_phase": "analysis", "next_step": "", "open_tickets": []string{}}))
		}
		if !strings.Contains(r.System, "# Analyse the request") || strings.Contains(r.Messages[0].Content, "## Ledger —") {
			return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "ok"}))
		}
		reply := llmtest.CallTools(call("l", "list_files", map[string]string{"pattern": "app/*"}))
		reply.Usage = big // every turn of the first session reports a full context
		return reply
	})
	s := llmtest.NewServer(t, rule)
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var misses, resets []runlog.Event
	for _, e := range eventsOf(t, dir, res.RunID) {
		switch e.Type {
		case runlog.MissNote:
			misses = append(misses, e)
		case runlog.Reset:
			resets = append(resets, e)
		}
	}
	if len(misses) != 2 || len(resets) != 1 || resets[0].Reason != runlog.ReasonForcedAfterMisses {
		t.Fatalf("misses %d, resets %+v; want 2 misses then one forced reset", len(misses), resets)
	}
	entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
	if err != nil || len(entries) != 1 || !entries[0].Complete() {
		t.Fatalf("ledger: %+v, %v; want one complete entry composed by baton", entries, err)
	}
	if !entries[0].Time.Equal(resets[0].LedgerTime) {
		t.Errorf("the reset names entry %v, the ledger has %v", resets[0].LedgerTime, entries[0].Time)
	}
	if f := ledger.Lint(eventsOf(t, dir, res.RunID), entries, nil); len(f) != 0 {
		t.Errorf("lint: %v", f)
	}
}

// A sub-agent return over its contract gets one condense request; still
// over, it is cut with a marker and a warning, and the parent never sees
// more than the contract.
func TestSubagentReturnsAreBounded(t *testing.T) {
	dir := copyExample(t)
	wfPath := filepath.Join(dir, "baton.yaml")
	data, _ := os.ReadFile(wfPath)
	os.WriteFile(wfPath, []byte(strings.Replace(string(data), "subagent_return_tokens: 1500", "subagent_return_tokens: 40", 1)), 0o644)
	long := strings.Repeat("a finding with many words in it ", 40)
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "You are a sub-agent") {
			last := r.Messages[len(r.Messages)-1].Content
			if strings.Contains(r.Messages[0].Content, "obedient") && strings.Contains(last, "condensed summary") {
				return llmtest.Text("short and within the contract")
			}
			return llmtest.Text(long)
		}
		if strings.Contains(r.System, "# Analyse the request") && agentRounds(r) == 0 {
			return llmtest.CallTools(call("d", "dispatch_agents", map[string]any{"tasks": []any{
				map[string]string{"goal": "obedient: summarise app/greet.py"},
				map[string]string{"goal": "stubborn: summarise the tests"},
			}}))
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "ok"}))
	})
	s := llmtest.NewServer(t, rule)
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]string{}
	for _, e := range eventsOf(t, dir, res.RunID) {
		if e.Type == runlog.SubagentReturn {
			actions[strings.Fields(e.Note)[0]] = e.Action
			// Both returns were over their bound: the log names the file
			// that keeps each whole.
			if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.SpillPath))); e.SpillPath == "" || err != nil || !strings.Contains(string(data), "a finding with many words") {
				t.Errorf("sub-agent return %q: spill_path %q does not hold the whole return (%v)", e.Note, e.SpillPath, err)
			}
		}
	}
	if actions["obedient:"] != runlog.ActionReRequested || actions["stubborn:"] != runlog.ActionTruncated {
		t.Errorf("actions = %v", actions)
	}
	// What the parent received.
	for _, r := range s.Requests() {
		for _, res := range r.ToolResults() {
			if strings.Contains(res.Content, "## Task 2") {
				if strings.Count(res.Content, "a finding with many words") > 10 {
					t.Errorf("the parent ingested an oversize return:\n%s", res.Content)
				}
				if !strings.Contains(res.Content, "[cut by baton") {
					t.Error("the cut return carries no marker")
				}
			}
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "cut to its 40-token contract") {
		t.Errorf("no warning for the cut return: %v", res.Warnings)
	}
}
