package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/tokens"
)

// setWindow rewrites the example's window_tokens (and, when set, its
// sub-agent contract).
func setWindow(t *testing.T, dir string, window, contract int) {
	t.Helper()
	p := filepath.Join(dir, "baton.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "window_tokens: 200000", fmt.Sprintf("window_tokens: %d", window), 1)
	// The example's phase estimates are made for a 200k window.
	s = regexp.MustCompile(`expect_tokens: \d+`).ReplaceAllString(s, "expect_tokens: 500")
	if contract > 0 {
		s = strings.Replace(s, "subagent_return_tokens: 1500", fmt.Sprintf("subagent_return_tokens: %d", contract), 1)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigText is about n bytes of numbered lines.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %04d: the quick brown fox jumps over the lazy dog, and the report goes on\n", i)
	}
	return b.String()
}

// withinWindow fails the test for every request the fake refused or that
// did not fit the window by the fake's count (prompt plus max_tokens).
func withinWindow(t *testing.T, s *llmtest.Server, window int) {
	t.Helper()
	for i, r := range s.Requests() {
		if r.Status == 499 {
			// The client went away before the answer: a test killed its
			// child process at this request. Whether the fake finished
			// writing first is a race, and no window is at stake.
			continue
		}
		if r.Status != http.StatusOK {
			t.Errorf("request %d: status %d: %s", i+1, r.Status, clipBody(r.Body))
			continue
		}
		if n := int(r.Usage.InputTokens) + r.MaxTokens; r.Usage.InputTokens > 0 && n > window {
			t.Errorf("request %d: %d prompt + %d max_tokens > window %d", i+1, r.Usage.InputTokens, r.MaxTokens, window)
		}
	}
}

// spillFiles are the run's spill files by name.
func spillFiles(t *testing.T, dir, id string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, ".baton", "runs", id, "spill"))
	if err != nil {
		t.Fatalf("spill folder: %v", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, ".baton", "runs", id, "spill", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

var readOn = regexp.MustCompile(`read on with read_file (\{[^}]*\})`)

// lastResult is the content of the request's newest tool result.
func lastResult(r llmtest.RecordedRequest) string {
	res := r.ToolResults()
	if len(res) == 0 {
		return ""
	}
	return res[len(res)-1].Content
}

func ledgerCall() llm.ToolCall {
	return call("led", "write_ledger", map[string]any{
		"frozen_decisions": []string{"add a --shout flag (docs/requirements.md:3)"},
		"done_so_far":      []any{map[string]string{"text": "read docs/big.txt", "evidence": "docs/big.txt:1"}},
		"artifacts":        []string{},
		"current_phase":    "analysis",
		"next_step":        "write specs/analysis.md",
		"open_tickets":     []string{},
	})
}

// With window_tokens 12000, a read_file of 78 KiB and a sub-agent dump over
// the whole window, against a fake that refuses any prompt over the window
// with the provider's real 400: the run completes, no request exceeds the
// window, the model pages through the spill file, the spilled files hold
// the full text, and the run log lints clean.
func TestSmallWindowRunCompletesWithinTheWindow(t *testing.T) {
	for _, prov := range []string{"anthropic", "openai"} {
		t.Run(prov, func(t *testing.T) {
			const window = 12000
			dir := copyExample(t)
			setWindow(t, dir, window, 0)
			big := bigText(78 << 10)
			writeFile(t, dir, "docs/big.txt", big)
			dump := strings.Repeat("the sub-agent's working notes, every one of them kept; ", 3000)
			var mu sync.Mutex
			var pages int
			rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				seeded := strings.Contains(r.Messages[0].Content, "## Ledger —")
				round := agentRounds(r)
				switch {
				case strings.Contains(r.System, "You are a sub-agent") && round == 0:
					// The sub-agent's own tool results are bounded too.
					return llmtest.CallTools(call("sr", "read_file", map[string]string{"path": "docs/big.txt"}))
				case strings.Contains(r.System, "You are a sub-agent"):
					return llmtest.Text(dump)
				case r.ToolChoiceName == "write_ledger":
					return llmtest.CallTools(ledgerCall())
				case strings.Contains(r.System, "# Analyse the request") && !seeded:
					if round == 0 {
						return llmtest.CallTools(call("r", "read_file", map[string]string{"path": "docs/big.txt"}))
					}
					if m := readOn.FindStringSubmatch(lastResult(r)); m != nil {
						pages++
						return llmtest.CallTools(llm.ToolCall{ID: fmt.Sprintf("p%d", round), Name: "read_file", Input: json.RawMessage(m[1])})
					}
					return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "read it all"}))
				case strings.Contains(r.System, "# Analyse the request"):
					if round == 0 {
						return llmtest.CallTools(call("w", "write_file", map[string]string{"path": "specs/analysis.md", "content": "# Analysis\n"}))
					}
					return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "analysis written"}))
				case strings.Contains(r.System, "# Implement") && round == 0:
					return llmtest.CallTools(call("d", "delegate_task", map[string]string{"goal": "dump everything about app/"}))
				case strings.Contains(r.System, "# Write the report"):
					return llmtest.Text("REPORT: done")
				}
				return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
			})
			s := llmtest.NewServer(t, rule)
			s.SetContextWindow(window)
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers[prov](t, s), ModelName: "m"})
			if err != nil {
				t.Fatal(err)
			}
			withinWindow(t, s, window)
			if pages == 0 {
				t.Error("the model never paged through the spill file")
			}
			if res.Resets == 0 {
				t.Error("no reset: the budget's threshold was never reached")
			}
			readSpills, subSpill := 0, false
			for name, b := range spillFiles(t, dir, res.RunID) {
				switch {
				case strings.Contains(name, "read_file"):
					readSpills++
					if !bytes.Equal(b, []byte(big)) {
						t.Errorf("%s holds %d bytes, want docs/big.txt's %d, byte for byte", name, len(b), len(big))
					}
				case strings.Contains(name, "subagent"):
					subSpill = true
					if string(b) != dump {
						t.Errorf("%s holds %d bytes, want the sub-agent's answer of %d", name, len(b), len(dump))
					}
				}
			}
			if readSpills != 2 || !subSpill {
				t.Errorf("spill files: %d of read_file (want the step's and the sub-agent's), subagent %v", readSpills, subSpill)
			}
			// The parent got the bounded answer and the pointer.
			found := false
			for _, r := range s.Requests() {
				for _, tr := range r.ToolResults() {
					if strings.Contains(tr.Content, "the sub-agent's full answer") {
						found = true
						if strings.Count(tr.Content, "working notes") > 400 {
							t.Errorf("the parent ingested an oversize return: %d bytes", len(tr.Content))
						}
					}
				}
			}
			if !found {
				t.Error("the parent never got the pointer to the sub-agent's full answer")
			}
			lintClean(t, dir, res.RunID, 1)
		})
	}
}

// When the context is too large to ask the session for its ledger entry
// (the side request would not fit the window), baton composes the entry
// from state.yaml and the run log instead of sending it.
func TestLedgerRequestOverTheWindowIsComposed(t *testing.T) {
	for _, prov := range []string{"anthropic", "openai"} {
		t.Run(prov, func(t *testing.T) {
			const window = 12000
			dir := copyExample(t)
			setWindow(t, dir, window, 0)
			var mu sync.Mutex
			asked := 0
			rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				seeded := strings.Contains(r.Messages[0].Content, "## Ledger —")
				switch {
				case r.ToolChoiceName == "write_ledger":
					asked++
					return llmtest.CallTools(ledgerCall())
				case strings.Contains(r.System, "# Analyse the request") && !seeded && agentRounds(r) == 0:
					// The model writes a file nearly as large as what the
					// window leaves: its own turn stays in the context.
					return llmtest.CallTools(call("w", "write_file", map[string]string{"path": "notes/scratch.md", "content": contentFor(promptOf(r))}))
				case strings.Contains(r.System, "# Write the report"):
					return llmtest.Text("REPORT: done")
				}
				return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
			})
			s := llmtest.NewServer(t, rule)
			s.SetContextWindow(window)
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers[prov](t, s), ModelName: "m"})
			if err != nil {
				t.Fatal(err)
			}
			withinWindow(t, s, window)
			if asked != 0 {
				t.Errorf("the ledger entry was asked for %d times; the request would not fit the window", asked)
			}
			var resets []runlog.Event
			for _, e := range eventsOf(t, dir, res.RunID) {
				if e.Type == runlog.Reset {
					resets = append(resets, e)
				}
			}
			if len(resets) != 1 || !strings.Contains(resets[0].Note, "composed by baton") {
				t.Fatalf("resets %+v; want one, seeded from the entry baton composed", resets)
			}
			entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
			if err != nil || len(entries) != 1 || !entries[0].Complete() {
				t.Fatalf("ledger: %+v, %v; want one complete entry", entries, err)
			}
			lintClean(t, dir, res.RunID, 1)
		})
	}
}

// promptOf counts a request's prompt as the fake's usage does.
func promptOf(r llmtest.RecordedRequest) int {
	n := tokens.Count(r.System)
	for _, m := range r.Messages {
		n += tokens.Count(m.PromptText())
	}
	for _, tl := range r.Tools {
		n += tokens.Count(tl.PromptText())
	}
	return n
}

// contentFor is write_file content that brings the next request close to
// the window: it fits (with the least reply baton asks for), and the same
// request with the ledger question and tool added does not. first is the
// prompt of the request being answered, as the fake counts it.
func contentFor(first int) string {
	// baton's estimate is the local count scaled by 1.1 and must leave
	// 1024 tokens for the reply: about 9978 local tokens fit a 12000
	// window, and the ledger question and tool add about 330. Aim between.
	target := 9800 - first - 40
	word := "spec "
	perWord := float64(tokens.Count(`write_file {"content":"`+strings.Repeat(word, 1000)+`"}`)) / 1000
	return strings.Repeat(word, int(float64(target)/perWord))
}

// A provider whose real window is smaller than window_tokens answers "prompt
// too long" (its real 400 body); the runner resets to a fresh session from
// the entry it composes, instead of failing the step, and the run completes.
// Before, the run aborted and every resume repeated the same 400.
func TestPromptTooLongIsAForcedResetNotAFailure(t *testing.T) {
	for _, prov := range []string{"anthropic", "openai"} {
		t.Run(prov, func(t *testing.T) {
			dir := copyExample(t)
			setWindow(t, dir, 12000, 0)
			writeFile(t, dir, "docs/big.txt", bigText(78<<10))
			rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				seeded := strings.Contains(r.Messages[0].Content, "## Ledger —")
				switch {
				case strings.Contains(r.System, "# Analyse the request") && !seeded && agentRounds(r) == 0:
					return llmtest.CallTools(call("r", "read_file", map[string]string{"path": "docs/big.txt"}))
				case strings.Contains(r.System, "# Write the report"):
					return llmtest.Text("REPORT: done")
				}
				return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
			})
			s := llmtest.NewServer(t, rule)
			s.SetContextWindow(7000) // the provider's real window
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers[prov](t, s), ModelName: "m"})
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, r := range s.Requests() {
				if r.Status == http.StatusBadRequest {
					refused++
				}
			}
			if refused != 1 {
				t.Errorf("%d requests refused by the provider, want 1", refused)
			}
			var resets []runlog.Event
			for _, e := range eventsOf(t, dir, res.RunID) {
				if e.Type == runlog.Reset {
					resets = append(resets, e)
				}
			}
			if len(resets) != 1 || resets[0].Reason != runlog.ReasonHardLimit || !strings.Contains(resets[0].Note, "composed by baton") {
				t.Fatalf("resets %+v; want one hard-limit reset from a composed entry", resets)
			}
			entries, _, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
			if err != nil || len(entries) != 1 || !entries[0].Complete() {
				t.Fatalf("ledger: %+v, %v; want one complete entry", entries, err)
			}
		})
	}
}

// 32 parallel sub-agents each returning 50k tokens cannot push the parent
// over its threshold: each answer's full text is spilled, and the dispatch
// result is bounded by what the budget leaves (and spilled whole).
func TestThirtyTwoSubagentDumpsStayUnderTheThreshold(t *testing.T) {
	const window, n = 40000, 32
	dir := copyExample(t)
	setWindow(t, dir, window, 0)
	dumps := make([]string, n)
	for i := range dumps {
		dumps[i] = fmt.Sprintf("ANSWER-%02d ", i) + strings.Repeat(fmt.Sprintf("finding %02d: more of it; ", i), 50000/6)
	}
	fakeUsage := &llm.Usage{InputTokens: 500, OutputTokens: 50000}
	var mu sync.Mutex
	var parent []llmtest.RecordedRequest
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "You are a sub-agent") {
			var i int
			fmt.Sscanf(r.Messages[0].Content, "Goal: task %d", &i)
			reply := llmtest.Text(dumps[i])
			reply.Usage = fakeUsage
			return reply
		}
		if strings.Contains(r.System, "# Analyse the request") {
			mu.Lock()
			parent = append(parent, r)
			mu.Unlock()
			if agentRounds(r) == 0 && !strings.Contains(r.Messages[0].Content, "## Ledger —") {
				var tasks []any
				for i := range n {
					tasks = append(tasks, map[string]string{"goal": fmt.Sprintf("task %d", i)})
				}
				return llmtest.CallTools(call("d", "dispatch_agents", map[string]any{"tasks": tasks}))
			}
		}
		if r.ToolChoiceName == "write_ledger" {
			return llmtest.CallTools(ledgerCall())
		}
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: done")
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
	})
	s := llmtest.NewServer(t, rule)
	s.SetContextWindow(window)
	wf := load(t, dir)
	res, err := runner.Run(context.Background(), runner.Config{Workflow: wf, Model: providers["openai"](t, s), ModelName: "m", SubagentConcurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	withinWindow(t, s, window)
	threshold := int(float64(window) * wf.ThresholdFraction)
	if len(parent) < 2 {
		t.Fatalf("the parent made %d requests", len(parent))
	}
	after := parent[1] // the turn that carries the dispatch result
	if p := promptOf(after); p > threshold {
		t.Errorf("the parent's context after the dispatch is %d tokens, over its threshold of %d", p, threshold)
	}
	spilled := spillFiles(t, dir, res.RunID)
	answers, dispatch := 0, 0
	for name, b := range spilled {
		switch {
		case strings.Contains(name, "subagent"):
			var i int
			fmt.Sscanf(string(b), "ANSWER-%d", &i)
			if string(b) != dumps[i] {
				t.Errorf("%s is not sub-agent %d's answer byte for byte", name, i)
			}
			answers++
		case strings.Contains(name, "dispatch_agents"):
			dispatch++
			if c := strings.Count(string(b), "the sub-agent's full answer"); c != n {
				t.Errorf("the spilled dispatch result holds %d pointers, want %d", c, n)
			}
		}
	}
	if answers != n || dispatch != 1 {
		t.Errorf("spilled %d answers and %d dispatch results, want %d and 1", answers, dispatch, n)
	}
	// No reset was needed, so there is no ledger to read.
	if f := ledger.Lint(eventsOf(t, dir, res.RunID), nil, nil); len(f) != 0 {
		t.Errorf("lint findings: %v", f)
	}
}

// The bounds are a pure function of what the journal replays: a run killed
// after cutting and spilling results resumes without sending any answered
// request again (the cut results, and so the requests' hashes, come out the
// same), and leaves one spill file for the one oversize result.
func TestKilledAfterASpillResumesWithoutPayingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	const window = 12000
	dir := copyExample(t)
	setWindow(t, dir, window, 0)
	writeFile(t, dir, "docs/big.txt", bigText(78<<10))
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		seeded := strings.Contains(r.Messages[0].Content, "## Ledger —")
		round := agentRounds(r)
		switch {
		case r.ToolChoiceName == "write_ledger":
			return llmtest.CallTools(ledgerCall())
		case strings.Contains(r.System, "# Analyse the request") && !seeded:
			if round == 0 {
				return llmtest.CallTools(call("r", "read_file", map[string]string{"path": "docs/big.txt"}))
			}
			if m := readOn.FindStringSubmatch(lastResult(r)); m != nil {
				return llmtest.CallTools(llm.ToolCall{ID: fmt.Sprintf("p%d", round), Name: "read_file", Input: json.RawMessage(m[1])})
			}
		case strings.Contains(r.System, "# Write the report"):
			return llmtest.Text("REPORT: done")
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "step done"}))
	})
	s := llmtest.NewServer(t, rule)
	s.SetContextWindow(window)
	var (
		mu       sync.Mutex
		killed   bool
		answered = map[string]bool{}
		child    *exec.Cmd
		killAt   = make(chan struct{})
	)
	s.OnRequest(func(r llmtest.RecordedRequest) {
		mu.Lock()
		defer mu.Unlock()
		if killed {
			return
		}
		if strings.Contains(r.System, "# Analyse the request") && agentRounds(r) == 2 {
			// After a read, its spill and a page of the spill file.
			killed = true
			child.Process.Signal(syscall.SIGKILL)
			close(killAt)
			return
		}
		answered[string(r.Body)] = true
	})
	child = exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_CHILD_DIR="+dir, "BATON_TEST_CHILD_URL="+s.OpenAIBaseURL())
	mu.Lock()
	if err := child.Start(); err != nil {
		mu.Unlock()
		t.Fatal(err)
	}
	mu.Unlock()
	select {
	case <-killAt:
	case <-time.After(60 * time.Second):
		child.Process.Kill()
		t.Fatal("the child never reached the kill point")
	}
	child.Wait()
	before := s.Count()
	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	for _, r := range s.Requests()[before:] {
		if answered[string(r.Body)] {
			t.Errorf("an answered request was sent again on resume: %s", clipBody(r.Body))
		}
	}
	if res.Replayed != len(answered) {
		t.Errorf("%d calls answered from the journal, want the %d answered before the kill", res.Replayed, len(answered))
	}
	withinWindow(t, s, window)
	if files := spillFiles(t, dir, res.RunID); len(files) != 1 {
		t.Errorf("%d spill files after the resume, want the one docs/big.txt made", len(files))
	}
	lintClean(t, dir, res.RunID, 2)
}
