package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/internal/testws"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/workflow"
)

// copyExample copies the shipped example workflow into a fresh workspace.
func copyExample(t *testing.T) string { return testws.Copy(t, "../examples/workflow") }

func call(id, name string, input any) llm.ToolCall {
	b, _ := json.Marshal(input)
	return llm.ToolCall{ID: id, Name: name, Input: b}
}

// agentRounds counts the assistant turns already in a request: which round
// of its session the agent is in.
func agentRounds(r llmtest.RecordedRequest) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

const subFinding = "SUBAGENT-FINDING-7731"

// script plays every agent of the example workflow deterministically. The
// analysis session reports a context near the window after its dispatch, so
// the budget forces a reset there.
func script(hugeUsage bool) llmtest.Rule {
	var mu sync.Mutex
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.Contains(r.System, "You are a sub-agent"):
			return llmtest.Text(subFinding + ": the flag parsing lives in app/greet.py:3")
		case r.ToolChoiceName == "write_ledger":
			return llmtest.CallTools(call("led1", "write_ledger", map[string]any{
				"frozen_decisions": []string{"add a --shout flag (docs/requirements.md:3)"},
				"done_so_far":      []any{map[string]string{"text": "read the requirements and the code", "evidence": "docs/requirements.md:1"}},
				"artifacts":        []string{},
				"current_phase":    "analysis",
				"next_step":        "write specs/analysis.md",
				"open_tickets":     []string{},
			}))
		}
		seeded := strings.Contains(r.Messages[0].Content, "## Ledger —")
		round := agentRounds(r)
		switch {
		case strings.Contains(r.System, "# Analyse the request"):
			if seeded {
				switch round {
				case 0:
					return llmtest.CallTools(
						call("w1", "write_file", map[string]string{"path": "specs/analysis.md", "content": "# Analysis\nAdd --shout.\n"}),
						call("s1", "update_state", map[string]any{"decision": map[string]string{"decision": "flag named --shout", "evidence": "docs/requirements.md:3"}}))
				default:
					return llmtest.CallTools(call("f1", "finish", map[string]string{"summary": "analysis written"}))
				}
			}
			switch round {
			case 0:
				return llmtest.CallTools(
					call("r1", "read_file", map[string]string{"path": "docs/requirements.md"}),
					call("l1", "list_files", map[string]string{"pattern": "app/*.py"}))
			case 1:
				reply := llmtest.CallTools(call("d1", "dispatch_agents", map[string]any{"tasks": []any{
					map[string]string{"goal": "find where arguments are parsed", "in_scope": "app/"},
					map[string]string{"goal": "find the tests that cover greeting", "in_scope": "app/test_greet.py"},
				}}))
				if hugeUsage {
					// The provider reports a context near the window.
					reply.Usage = &llm.Usage{InputTokens: 150_000, OutputTokens: 40}
				}
				return reply
			default:
				return llmtest.CallTools(call("f0", "finish", map[string]string{"summary": "not reached"}))
			}
		case strings.Contains(r.System, "plan-change") || strings.Contains(r.System, "# Plan"):
			if round == 0 {
				return llmtest.CallTools(call("p1", "write_file", map[string]string{"path": "specs/plan.md", "content": "# Plan\n1. add the flag\n"}))
			}
			return llmtest.CallTools(call("p2", "finish", map[string]string{"summary": "plan written"}))
		case strings.Contains(r.System, "# Implement") || strings.Contains(r.System, "implement"):
			switch round {
			case 0:
				return llmtest.CallTools(call("i1", "read_file", map[string]string{"path": "app/greet.py"}))
			case 1:
				return llmtest.CallTools(call("i2", "write_file", map[string]string{"path": "app/greet.py", "content": "print('HELLO')\n"}))
			}
			return llmtest.CallTools(call("i3", "finish", map[string]string{"summary": "implemented"}))
		default: // the report
			if round == 0 {
				return llmtest.CallTools(call("rp1", "write_file", map[string]string{"path": "specs/report.md", "content": "# Report\nDone.\n"}))
			}
			_ = last
			return llmtest.Text("REPORT: the --shout flag is in.")
		}
	})
}

type mkModel func(t *testing.T, s *llmtest.Server) llm.Model

var providers = map[string]mkModel{
	"anthropic": func(t *testing.T, s *llmtest.Server) llm.Model {
		m, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: s.AnthropicBaseURL(), Model: "claude-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	},
	"openai": func(t *testing.T, s *llmtest.Server) llm.Model {
		m, err := openai.New(openai.Config{APIKey: "k", BaseURL: s.OpenAIBaseURL(), Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	},
}

func load(t *testing.T, dir string) *workflow.Workflow {
	t.Helper()
	wf, err := workflow.Load(filepath.Join(dir, "baton.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

func TestExampleWorkflowEndToEnd(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t)
			stateBefore, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml"))
			s := llmtest.NewServer(t, script(true))
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: mk(t, s), ModelName: "test-model"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Summary != "REPORT: the --shout flag is in." || res.Resets < 1 {
				t.Errorf("summary %q, resets %d", res.Summary, res.Resets)
			}
			// Artifacts of every phase exist.
			for _, f := range []string{"specs/analysis.md", "specs/plan.md", "specs/report.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("artifact %s: %v", f, err)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "app/greet.py")); string(got) != "print('HELLO')\n" {
				t.Errorf("app/greet.py = %q", got)
			}

			reqs := s.Requests()
			// Sub-agents ran in fresh contexts with only their brief.
			subs := 0
			for _, r := range reqs {
				if strings.Contains(r.System, "You are a sub-agent") {
					subs++
					if len(r.Messages) != 1 || !strings.HasPrefix(r.Messages[0].Content, "Goal: ") {
						t.Errorf("sub-agent request holds more than its brief: %+v", r.Messages)
					}
				}
			}
			if subs != 2 {
				t.Errorf("sub-agent requests = %d, want 2", subs)
			}
			// The first request after the reset holds the ledger entry and
			// none of the earlier transcript.
			var afterReset *llmtest.RecordedRequest
			for i, r := range reqs {
				if r.ToolChoiceName == "write_ledger" {
					for _, n := range reqs[i+1:] {
						if strings.Contains(n.System, "# Analyse the request") {
							afterReset = &n
							break
						}
					}
					break
				}
			}
			if afterReset == nil {
				t.Fatal("no session after the reset")
			}
			if len(afterReset.Messages) != 1 {
				t.Fatalf("the fresh session starts with %d messages, want 1", len(afterReset.Messages))
			}
			first := afterReset.Messages[0].Content
			if !strings.Contains(first, "## Ledger — analysis —") || !strings.Contains(first, "write specs/analysis.md") {
				t.Errorf("the fresh session lacks the ledger entry:\n%s", first)
			}
			if strings.Contains(first, subFinding) {
				t.Error("the fresh session holds the earlier transcript (a sub-agent's return)")
			}
			// Every step after the first starts fresh: one message.
			// The ledger holds a complete entry; state.yaml kept the user's
			// keys and comments.
			entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
			if err != nil || len(entries) == 0 || !entries[0].Complete() {
				t.Fatalf("ledger entries %+v, %v", entries, err)
			}
			stateAfter, _ := os.ReadFile(filepath.Join(dir, "specs/state.yaml"))
			checkUserLines(t, string(stateBefore), string(stateAfter))
			if !strings.Contains(string(stateAfter), "flag named --shout") {
				t.Error("the decision did not reach state.yaml")
			}
			// The run log passes the red-flag lint.
			events, _, err := runlog.Read(filepath.Join(dir, ".baton", "runs", res.RunID, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if f := ledger.Lint(events, entries, nil); len(f) != 0 {
				t.Errorf("lint findings on a clean run: %v", f)
			}
			// Every model call of a step names its turn, and every tool
			// call the model asked for is logged under its name.
			calls, subCalls, tools := 0, 0, map[string]int{}
			for _, e := range events {
				switch e.Type {
				case runlog.ModelCall:
					calls++
					if e.Turn < 1 || e.ContextTokens <= 0 || e.Usage == nil || e.Replayed {
						t.Errorf("model_call at line %d: turn %d, context %d, usage %v, replayed %v", e.Line, e.Turn, e.ContextTokens, e.Usage, e.Replayed)
					}
					if e.Subagent {
						subCalls++
					}
				case runlog.ToolCall:
					tools[e.Tool]++
					if e.Turn < 1 || e.Step == "" || (e.Status != runlog.ToolOK && e.Status != runlog.ToolError) {
						t.Errorf("tool_call at line %d: %+v", e.Line, e)
					}
				}
			}
			if calls != len(reqs) || subCalls != subs {
				t.Errorf("model_call events %d (%d of sub-agents), requests %d (%d of sub-agents)", calls, subCalls, len(reqs), subs)
			}
			if tools["dispatch_agents"] != 1 || tools["finish"] == 0 {
				t.Errorf("tool_call events by name %v", tools)
			}
			if res.Usage != s.TotalUsage() {
				t.Errorf("usage %+v != server %+v", res.Usage, s.TotalUsage())
			}
			_ = fmt.Sprint
		})
	}
}

type workflowT = workflow.Workflow

func loadWorkflow(path string) (*workflow.Workflow, error) { return workflow.Load(path) }

// checkUserLines checks that every line of the state file outside the keys
// baton owns is still there, byte for byte and in order.
func checkUserLines(t *testing.T, before, after string) {
	t.Helper()
	owned := false
	var user []string
	for _, line := range strings.Split(before, "\n") {
		top := line != "" && line[0] != ' ' && line[0] != '#'
		if top {
			owned = strings.HasPrefix(line, "handoff:") || strings.HasPrefix(line, "example_cycle:") || strings.HasPrefix(line, "metrics:")
		}
		if !owned || strings.Contains(line, "team_note") || strings.HasPrefix(line, "handoff:") {
			user = append(user, line)
		}
	}
	rest := after
	for _, line := range user {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Errorf("state.yaml lost or reordered the line %q\n%s", line, after)
			return
		}
		rest = rest[i+len(line):]
	}
}
