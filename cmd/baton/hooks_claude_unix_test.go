//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/hostgov"
	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
)

// claudeBinary finds the Claude Code CLI: $BATON_CLAUDE (which .ci/run
// exports), else claude on PATH. Without it the test skips, saying so;
// under CI it fails (testdep).
func claudeBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv("BATON_CLAUDE") == "" && os.Getenv("BATON_CLAUDE_UNAVAILABLE") == "" {
		if p, err := exec.LookPath("claude"); err == nil {
			return p
		}
	}
	return testdep.FromEnv(t, "BATON_CLAUDE", "the Claude Code CLI")
}

// compactionCue is how Claude Code 2.1 opens its compaction request: the
// summarising turn must not call tools.
const compactionCue = "Respond with TEXT ONLY"

// subagentCue marks the prompt of the sub-agent the fake has the session
// start; bigReturn is what the sub-agent answers, well over 2,000 tokens.
const subagentCue = "SUBAGENT-RESEARCH"

var bigReturn = strings.Repeat("The sub-agent reports one more finding in full detail. ", 500)

// claudeFake is the Anthropic-protocol server Claude Code talks to in the
// test, and what it saw.
type claudeFake struct {
	srv       *llmtest.Server
	project   string
	usage     atomic.Int64 // input tokens to report
	tooLong   atomic.Bool  // refuse the next request as over the window
	mu        sync.Mutex
	compacted []compactionSeen
	seen      []seenRequest // every request, in the order the rule saw them
}

type seenRequest struct {
	text                string
	compaction, refused bool
}

// compactionSeen is the ledger as it was on disk when a compaction
// request arrived.
type compactionSeen struct {
	seq      int
	complete int
	latest   *ledger.Entry
}

func newClaudeFake(t *testing.T, project string) *claudeFake {
	f := &claudeFake{project: project}
	f.usage.Store(1000)
	seq := 0
	f.srv = llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		text := requestText(r)
		compaction := strings.Contains(lastUser(r), compactionCue)
		refuse := !compaction && f.tooLong.CompareAndSwap(true, false)
		f.mu.Lock()
		seq++
		n := seq
		f.seen = append(f.seen, seenRequest{text: text, compaction: compaction, refused: refuse})
		f.mu.Unlock()
		if compaction {
			f.sawCompaction(n)
			return llmtest.Reply{Text: "Summary: the user asked for notes; notes.txt was written.", Usage: &llm.Usage{InputTokens: 2000, OutputTokens: 20}}
		}
		if refuse {
			return llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"}
		}
		u := &llm.Usage{InputTokens: f.usage.Load(), OutputTokens: 10}
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.Contains(lastUser(r), subagentCue):
			return llmtest.Reply{Text: bigReturn, Usage: u}
		case strings.Contains(last.Content, "DELEGATE") && len(last.ToolResults) == 0:
			in, _ := json.Marshal(map[string]any{"description": "research", "prompt": subagentCue + ": find everything", "subagent_type": "general-purpose", "run_in_background": false})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("Agent", string(in))}, Usage: u}
		}
		if strings.Contains(text, "WRITEFILE") && len(last.ToolResults) == 0 && !strings.Contains(text, "notes written") {
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(project, "notes.txt"), "content": "the notes\n"})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("Write", string(in))}, Usage: u}
		}
		if len(last.ToolResults) > 0 {
			return llmtest.Reply{Text: "notes written", Usage: u}
		}
		return llmtest.Reply{Text: "ok", Usage: u}
	}))
	return f
}

func (f *claudeFake) sawCompaction(seq int) {
	entries, _, _ := ledger.Read(filepath.Join(f.project, "specs", "ledger.md"))
	c := compactionSeen{seq: seq, latest: ledger.LatestOf(entries)}
	for _, e := range entries {
		if e.Complete() {
			c.complete++
		}
	}
	f.mu.Lock()
	f.compacted = append(f.compacted, c)
	f.mu.Unlock()
}

func (f *claudeFake) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

func (f *claudeFake) compactions() []compactionSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]compactionSeen(nil), f.compacted...)
}

// requestText is everything a request showed the model.
func requestText(r llmtest.RecordedRequest) string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n" + m.Content)
		for _, tr := range m.ToolResults {
			b.WriteString("\n" + tr.Content)
		}
	}
	return b.String()
}

func lastUser(r llmtest.RecordedRequest) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// claudeSession runs the real CLI headless in project against the fake.
type claudeSession struct {
	t                     *testing.T
	claude, project, home string
	env                   []string
}

func (c *claudeSession) run(args ...string) map[string]any {
	c.t.Helper()
	cmd := exec.Command(c.claude, append([]string{"--output-format", "json", "--allowedTools", "Write"}, args...)...)
	cmd.Dir = c.project
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("claude %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		c.t.Fatalf("claude %v did not end", args)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		c.t.Fatalf("claude %v printed no JSON result: %v\n%s\nstderr: %s", args, err, out.String(), errb.String())
	}
	if res["is_error"] == true {
		c.t.Fatalf("claude %v failed: %v\nstderr: %s", args, res["result"], errb.String())
	}
	return res
}

func runBatonCLI(t *testing.T, bin, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("baton %v: %v\n%s", args, err, out)
	}
	return string(out)
}

const userSettings = `{
  "model": "claude-opus-5-5",
  "hooks": {
    "UserPromptSubmit": [
      { "hooks": [ { "type": "command", "command": "echo prompt >> \"$CLAUDE_PROJECT_DIR/user-hook.log\"" } ] }
    ]
  },
  "env": {"KEEP": "mine"}
}
`

// claudeProject builds baton, makes a project whose settings have a hook
// of the user's own, starts the fake and installs baton's hooks.
func claudeProject(t *testing.T) (*claudeSession, *claudeFake, string) {
	t.Helper()
	claude := claudeBinary(t)
	bin := buildBaton(t)
	project, home := t.TempDir(), t.TempDir()
	settings := filepath.Join(project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := newClaudeFake(t, project)
	env := []string{
		"PATH=" + filepath.Dir(bin) + ":" + filepath.Dir(claude) + ":/usr/bin:/bin",
		"HOME=" + home, "BATON_HOME=" + filepath.Join(home, "baton"), "TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=" + fake.srv.AnthropicBaseURL(), "ANTHROPIC_API_KEY=sk-ant-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
	}
	runBatonCLI(t, bin, project, env, "hooks", "install", "--host", "claude-code", "--scope", "project")
	if st := runBatonCLI(t, bin, project, env, "hooks", "status"); !strings.Contains(st, "claude-code project: installed") || !strings.Contains(st, "(on PATH)") {
		t.Fatalf("hooks status after install:\n%s", st)
	}
	return &claudeSession{t: t, claude: claude, project: project, home: home, env: env}, fake, bin
}

// TestHooksClaudeCode runs the real Claude Code CLI, with baton's hooks
// installed in a project that has hooks of its own, through a write, a
// turn past the threshold, a manual /compact and an automatic compaction,
// then uninstalls.
func TestHooksClaudeCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and runs Claude Code")
	}
	c, fake, bin := claudeProject(t)
	project, env := c.project, c.env
	settings := filepath.Join(project, ".claude", "settings.json")

	// A session that writes a file.
	res := c.run("-p", "please WRITEFILE")
	id, _ := res["session_id"].(string)
	if id == "" {
		t.Fatalf("no session id in %v", res)
	}
	if _, err := os.Stat(filepath.Join(project, "notes.txt")); err != nil {
		t.Fatalf("the session did not write notes.txt: %v", err)
	}

	// A turn whose reported usage passes the threshold (0.65 of 200k):
	// the next request carries the threshold line.
	fake.usage.Store(150_000)
	c.run("-p", "a big turn", "--resume", id)
	fake.usage.Store(1000)
	before := len(fake.requests())
	c.run("-p", "after the big turn", "--resume", id)
	if !strings.Contains(fake.requests()[before].text, "past the threshold") {
		t.Errorf("the request after a turn at 150k of 200k tokens lacks the threshold line")
	}

	// A manual compaction: the entry is on disk before the compaction
	// request, names the file written, and the next request carries it.
	c.run("-p", "/compact", "--resume", id)
	c.run("-p", "go on", "--resume", id)
	checkCompactions(t, fake, 1)

	// An automatic compaction: the provider refuses a request as too long
	// and Claude Code compacts on its own.
	fake.tooLong.Store(true)
	c.run("-p", "one more turn", "--resume", id)
	checkCompactions(t, fake, 2)

	events, _, err := runlog.Read(filepath.Join(project, ".baton", hostgov.SessionsDir, id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var triggers []string
	crossed := false
	for _, e := range events {
		switch e.Type {
		case runlog.Reset:
			triggers = append(triggers, e.Reason)
			if e.LedgerTime.IsZero() {
				t.Errorf("compaction %s logged without a ledger entry", e.Reason)
			}
		case runlog.ThresholdCrossed:
			crossed = true
		}
	}
	if strings.Join(triggers, ",") != "manual,auto" || !crossed {
		t.Errorf("session log: compactions %v, threshold crossed %v; want manual,auto and true", triggers, crossed)
	}
	if out := runBatonCLI(t, bin, project, env, "ledger", "lint", "--session", id); !strings.HasPrefix(out, "clean") {
		t.Errorf("ledger lint --session: %s", out)
	}
	if out := runBatonCLI(t, bin, project, env, "runs", "list", "--kind", "session"); !strings.Contains(out, id) {
		t.Errorf("runs list --kind session lacks %s:\n%s", id, out)
	}
	// The user's own hook fired on every prompt alongside baton's.
	if data, _ := os.ReadFile(filepath.Join(project, "user-hook.log")); strings.Count(string(data), "prompt") < 5 {
		t.Errorf("the user's UserPromptSubmit hook ran %d times, want one per prompt (5 or more)", strings.Count(string(data), "prompt"))
	}

	runBatonCLI(t, bin, project, env, "hooks", "uninstall")
	if got, _ := os.ReadFile(settings); string(got) != userSettings {
		t.Errorf("uninstall did not restore settings.json byte for byte:\n%s", got)
	}
}

// checkCompactions checks that want compactions reached the fake, each
// with a complete ledger entry on disk written after the one before it,
// naming notes.txt, and that the first request after each carried that
// entry's heading.
func checkCompactions(t *testing.T, fake *claudeFake, want int) {
	t.Helper()
	seen := fake.compactions()
	// Claude Code may send more than one summarising request for one
	// compaction; group them by the ledger they saw.
	var firsts []compactionSeen
	for _, c := range seen {
		if len(firsts) == 0 || c.complete != firsts[len(firsts)-1].complete {
			firsts = append(firsts, c)
		}
	}
	if len(firsts) < want {
		t.Fatalf("%d compactions reached the fake with a new ledger entry each, want %d (saw %+v)", len(firsts), want, seen)
	}
	c := firsts[want-1]
	if c.latest == nil || c.complete < want {
		t.Fatalf("compaction %d: %d complete ledger entries on disk when its request arrived, want %d", want, c.complete, want)
	}
	if !strings.Contains(strings.Join(c.latest.Artifacts, " "), "notes.txt") {
		t.Errorf("compaction %d: the ledger entry does not name notes.txt: %s", want, ledger.Render(*c.latest))
	}
	reqs := fake.requests()
	last := 0
	for _, s := range seen {
		if s.complete == c.complete {
			last = s.seq
		}
	}
	heading := c.latest.Heading()
	for i := last; i < len(reqs); i++ { // seq is 1-based: reqs[last] follows it
		if reqs[i].compaction || reqs[i].refused {
			continue
		}
		if !strings.Contains(reqs[i].text, heading) {
			t.Errorf("compaction %d: the first request after it lacks the ledger entry %q", want, heading)
		}
		return
	}
	t.Errorf("compaction %d: no request followed it", want)
}

// TestHooksClaudeCodeSubagent has the real CLI start a sub-agent whose
// return is over its contract: the return is kept whole under .baton, the
// session log records it, and the parent's next request tells the agent
// to ask for a condensed summary.
func TestHooksClaudeCodeSubagent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and runs Claude Code")
	}
	c, fake, _ := claudeProject(t)
	res := c.run("-p", "please DELEGATE the research", "--allowedTools", "Agent")
	id, _ := res["session_id"].(string)
	var told bool
	for _, r := range fake.requests() {
		if strings.Contains(r.text, bigReturn[:200]) && strings.Contains(r.text, "ask the sub-agent for a condensed summary") {
			told = true
		}
	}
	if !told {
		t.Errorf("no request after the sub-agent's return told the agent to ask for a condensed summary")
	}
	events, _, err := runlog.Read(filepath.Join(c.project, ".baton", hostgov.SessionsDir, id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ret *runlog.Event
	for i := range events {
		if events[i].Type == runlog.SubagentReturn {
			ret = &events[i]
		}
	}
	if ret == nil || ret.Tokens <= hostgov.DefaultContractTokens || ret.SpillPath == "" {
		t.Fatalf("session log has no oversized return: %+v", events)
	}
	if data, err := os.ReadFile(filepath.Join(c.project, ret.SpillPath)); err != nil || !strings.Contains(string(data), bigReturn[:200]) {
		t.Errorf("the whole return is not kept in %s: %v", ret.SpillPath, err)
	}
}
