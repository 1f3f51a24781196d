package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

func toolCall(name string, input any) llm.ToolCall {
	b, _ := json.Marshal(input)
	return llm.ToolCall{Name: name, Input: b}
}

func rounds(r llmtest.RecordedRequest) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// workScript plays every agent of the example workflow with real work:
// reads, writes, a dispatch of two sub-agents, a decision.
func workScript(r llmtest.RecordedRequest) llmtest.Reply {
	n := rounds(r)
	switch {
	case strings.Contains(r.System, "You are a sub-agent"):
		if n == 0 {
			// Each reads a file no later step reads.
			p := "README.md"
			if strings.Contains(r.Messages[0].Content, "arguments") {
				p = "docs/requirements.md"
			}
			return llmtest.CallTools(toolCall("read_file", map[string]string{"path": p}))
		}
		return llmtest.Text("finding for: " + strings.SplitN(r.Messages[0].Content, "\n", 2)[0])
	case strings.Contains(r.System, "# Analyse the request"):
		switch n {
		case 0:
			return llmtest.CallTools(toolCall("read_file", map[string]string{"path": "docs/requirements.md"}),
				toolCall("write_file", map[string]string{"path": "specs/analysis.md", "content": "# Analysis\nAdd --shout.\n"}))
		case 1:
			return llmtest.CallTools(toolCall("dispatch_agents", map[string]any{"tasks": []any{
				map[string]string{"goal": "find where arguments are parsed"},
				map[string]string{"goal": "find the tests that cover greeting"},
			}}))
		case 2:
			return llmtest.CallTools(toolCall("update_state", map[string]any{"decision": map[string]string{"decision": "flag named --shout", "evidence": "docs/requirements.md:3"}}))
		}
		return llmtest.CallTools(toolCall("finish", map[string]string{"summary": "analysis written"}))
	case strings.Contains(r.System, "# Plan"):
		if n == 0 {
			return llmtest.CallTools(toolCall("write_file", map[string]string{"path": "specs/plan.md", "content": "# Plan\n1. add the flag\n"}))
		}
		return llmtest.CallTools(toolCall("finish", map[string]string{"summary": "plan written"}))
	case strings.Contains(r.System, "# Implement"):
		switch n {
		case 0:
			return llmtest.CallTools(toolCall("read_file", map[string]string{"path": "app/greet.py"}))
		case 1:
			return llmtest.CallTools(toolCall("write_file", map[string]string{"path": "app/greet.py", "content": "print('HELLO')\n"}))
		}
		return llmtest.CallTools(toolCall("finish", map[string]string{"summary": "implemented"}))
	}
	if n == 0 {
		return llmtest.CallTools(toolCall("write_file", map[string]string{"path": "specs/report.md", "content": "# Report\nDone.\n"}))
	}
	return llmtest.Text("REPORT: the --shout flag is in.")
}

// asked counts the turns the fake answers, per session and turn (system
// prompt, sub-agent brief, number of messages), and holds the one request a
// test picks until the test lets it go.
type asked struct {
	mu       sync.Mutex
	answered map[string]int
	again    []string
	hold     func(r llmtest.RecordedRequest) bool
	arrived  chan struct{}
	release  chan struct{}
	once     sync.Once
}

func newAsked() *asked {
	return &asked{answered: map[string]int{}, arrived: make(chan struct{}), release: make(chan struct{})}
}

func (a *asked) rule() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		a.mu.Lock()
		hold := a.hold
		a.mu.Unlock()
		if hold != nil && hold(r) {
			a.once.Do(func() { close(a.arrived) })
			<-a.release
			return llmtest.Fail(500, "api_error", "held")
		}
		session := ""
		if strings.Contains(r.System, "You are a sub-agent") {
			session = r.Messages[0].Content
		}
		k := fmt.Sprintf("%s\x00%s\x00%d", r.System, session, len(r.Messages))
		a.mu.Lock()
		if a.answered[k] > 0 {
			a.again = append(a.again, fmt.Sprintf("%.40q turn of %d messages", r.System, len(r.Messages)))
		}
		a.answered[k]++
		a.mu.Unlock()
		return workScript(r)
	})
}

func (a *asked) check(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.again {
		t.Errorf("a turn already answered was asked again: %s", s)
	}
}

var clock = regexp.MustCompile(`(?m)^\s*(total_seconds|avg_seconds|at):.*$|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// outcome is what a run leaves: state.yaml, the ledger (without an entry a
// resume composes), the artifacts; clock readings blanked.
func outcome(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"specs/state.yaml", "specs/ledger.md", "specs/analysis.md", "specs/plan.md", "specs/report.md", "app/greet.py"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		s := string(data)
		if f == "specs/ledger.md" {
			parts := strings.Split(s, "## Ledger — ")
			kept := parts[:1]
			for _, e := range parts[1:] {
				if !strings.Contains(e, "resume the run at skill") {
					kept = append(kept, e)
				}
			}
			s = strings.Join(kept, "## Ledger — ")
		}
		out[f] = clock.ReplaceAllString(s, "<clock>")
	}
	return out
}

// uninterrupted runs the script to the end and returns what it left.
func uninterrupted(t *testing.T) map[string]string {
	t.Helper()
	dir := exampleWorkspace(t)
	s := llmtest.NewServer(t, llmtest.Func(workScript))
	code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"), "--provider", "openai", "--base-url", s.OpenAIBaseURL(), "--concurrency", "1")
	if code != exitOK {
		t.Fatalf("the uninterrupted run: exit %d\n%s", code, errOut)
	}
	return outcome(t, dir)
}

// stepStarts lists the step numbers of the run's step_start events, by
// skill.
func stepStarts(t *testing.T, dir string) map[string][]string {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "events.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	data, err := os.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct{ Type, Skill, Step string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Type == "step_start" {
			out[e.Skill] = append(out[e.Skill], e.Step)
		}
	}
	return out
}

// "resume with: baton resume" is said only where a resume gets further;
// elsewhere the message says what to change.
func TestResumeAdviceFollowsTheFailure(t *testing.T) {
	isolateEnv(t)
	start := func(t *testing.T, rule llmtest.Rule) (*llmtest.Server, func(args ...string) (int, string)) {
		dir := exampleWorkspace(t)
		s := llmtest.NewServer(t, rule)
		return s, func(args ...string) (int, string) {
			args = append(args, "--workflow", filepath.Join(dir, "baton.yaml"), "--provider", "openai", "--base-url", s.OpenAIBaseURL(), "--concurrency", "1")
			code, _, errOut := runBaton(t, "", args...)
			return code, errOut
		}
	}
	t.Run("provider failure after retries", func(t *testing.T) {
		var mu sync.Mutex
		failing := true
		s, baton := start(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if failing && strings.Contains(r.System, "# Implement") && rounds(r) == 2 {
				return llmtest.Fail(500, "api_error", "the server fell over")
			}
			return workScript(r)
		}))
		code, errOut := baton("run", "--max-attempts", "2")
		if code != exitError || !strings.Contains(lastLine(errOut), "HTTP 500") || !strings.Contains(lastLine(errOut), "(resume with: baton resume --workflow ") {
			t.Fatalf("run: exit %d, last line %q", code, lastLine(errOut))
		}
		mu.Lock()
		failing = false
		mu.Unlock()
		before := s.Count()
		code, errOut = baton("resume")
		if code != exitOK || !strings.Contains(errOut, " 2 calls answered from journals") {
			t.Fatalf("resume: exit %d\n%s", code, errOut)
		}
		// The rest of step 3 (its last turn) and step 4's two turns.
		if n := s.Count() - before; n != 3 {
			t.Errorf("the resume sent %d requests, want 3", n)
		}
	})
	t.Run("request refused", func(t *testing.T) {
		_, baton := start(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
			if strings.Contains(r.System, "# Plan") {
				return llmtest.Fail(400, "invalid_request_error", "this model does not take tools")
			}
			return workScript(r)
		}))
		code, errOut := baton("run")
		last := lastLine(errOut)
		if code != exitError || strings.Contains(last, "resume with") || !strings.Contains(last, "baton resume would send it again") || !strings.Contains(last, "start over with baton run --fresh") {
			t.Fatalf("run: exit %d, last line %q", code, last)
		}
		code, errOut = baton("resume")
		last = lastLine(errOut)
		if code != exitError || strings.Contains(last, "resume with") || !strings.Contains(last, "resuming again will keep failing") || !strings.Contains(last, "start over with baton run --fresh") {
			t.Fatalf("resume: exit %d, last line %q", code, last)
		}
	})
	t.Run("max turns", func(t *testing.T) {
		_, baton := start(t, llmtest.Func(workScript))
		code, errOut := baton("run", "--max-turns", "2")
		if code != exitError || !strings.HasSuffix(lastLine(errOut), "--max-turns 4)") || !strings.Contains(lastLine(errOut), "(resume with: baton resume --workflow ") {
			t.Fatalf("run: exit %d, last line %q", code, lastLine(errOut))
		}
		// Turns 0 and 1, and the two turns of each sub-agent turn 1
		// dispatched.
		if code, errOut := baton("resume", "--max-turns", "4"); code != exitOK || !strings.Contains(errOut, " 6 calls answered from journals") {
			t.Fatalf("resume --max-turns 4: exit %d\n%s", code, errOut)
		}
	})
	t.Run("usage error", func(t *testing.T) {
		_, baton := start(t, llmtest.Func(workScript))
		if code, errOut := baton("run", "--max-turns", "0"); code != exitUsage || strings.Contains(errOut, "resume") {
			t.Fatalf("run --max-turns 0: exit %d\n%s", code, errOut)
		}
	})
}

// An external agent that fails a step: the resume runs that step again
// under its own number (not a new one), and no step before it.
func TestFailedAgentStepResumesUnderItsNumber(t *testing.T) {
	isolateEnv(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	agent := flakyAgent(t, logDir, "")
	wf := filepath.Join(ws, "baton.yaml")
	code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", agent)
	if code != exitError || !strings.Contains(lastLine(errOut), "step 2 (plan-change)") || !strings.Contains(lastLine(errOut), "(resume with: baton resume --workflow ") {
		t.Fatalf("run: exit %d, last line %q", code, lastLine(errOut))
	}
	if code, _, errOut := runBaton(t, "", "resume", "--workflow", wf, "--agent-cmd", agent); code != exitOK {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	calls, _ := os.ReadFile(filepath.Join(logDir, "calls"))
	if got := strings.Fields(string(calls)); strings.Join(got, " ") != "analyse-request plan-change plan-change implement-change write-report" {
		t.Errorf("the agent ran %v", got)
	}
	if got := stepStarts(t, ws)["plan-change"]; len(got) != 2 || got[0] != "2" || got[1] != "2" {
		t.Errorf("plan-change started as steps %v, want [2 2]", got)
	}
	if got := stepStarts(t, ws)["write-report"]; len(got) != 1 || got[0] != "4" {
		t.Errorf("write-report started as steps %v, want [4]", got)
	}
}
