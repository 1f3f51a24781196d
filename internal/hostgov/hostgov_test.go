package hostgov

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/filelock"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/tokens"
)

// transcript writes a Claude Code transcript of the given lines (JSON
// values) and returns its path.
func transcript(t *testing.T, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func userLine(text string, at time.Time) map[string]any {
	return map[string]any{"type": "user", "timestamp": at, "message": map[string]any{"role": "user", "content": text}}
}

func assistantLine(at time.Time, input int, blocks ...map[string]any) map[string]any {
	return map[string]any{"type": "assistant", "timestamp": at, "message": map[string]any{"role": "assistant", "model": "claude-sonnet-4-5",
		"content": blocks, "usage": map[string]int{"input_tokens": input, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}}}
}

func toolUse(name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func compactBoundary(at time.Time) map[string]any {
	return map[string]any{"type": "system", "subtype": "compact_boundary", "timestamp": at, "compactMetadata": map[string]any{"trigger": "manual"}}
}

// workSession is a transcript of a session that wrote two files and
// keeps a todo list.
func workSession(t *testing.T, project string) string {
	return transcript(t,
		userLine("Add a parser for the config file", t0),
		assistantLine(t0.Add(time.Second), 3000, toolUse("Write", map[string]any{"file_path": filepath.Join(project, "config/parse.go"), "content": "package config"})),
		assistantLine(t0.Add(2*time.Second), 3500, toolUse("Edit", map[string]any{"file_path": filepath.Join(project, "README.md"), "old_string": "a", "new_string": "b"})),
		assistantLine(t0.Add(3*time.Second), 4000, toolUse("TodoWrite", map[string]any{"todos": []map[string]string{
			{"content": "Write the parser", "status": "completed"}, {"content": "Test the parser on bad input", "status": "in_progress"}}})),
		assistantLine(t0.Add(4*time.Second), 4200, textBlock("The parser is written; tests come next.")),
	)
}

func payload(event, session, tr string, extra map[string]any) []byte {
	m := map[string]any{"session_id": session, "transcript_path": tr, "cwd": "/nowhere", "hook_event_name": event}
	for k, v := range extra {
		m[k] = v
	}
	data, _ := json.Marshal(m)
	return data
}

func opts() Options {
	return Options{NoHistory: true, Now: func() time.Time { return t0.Add(time.Hour) }}
}

func handle(t *testing.T, event string, stdin []byte, project string, o Options) Result {
	t.Helper()
	r, err := Handle(context.Background(), event, stdin, project, o)
	if err != nil {
		t.Fatalf("%s: %v", event, err)
	}
	return r
}

func sessionEvents(t *testing.T, project, id string) []runlog.Event {
	t.Helper()
	evs, _, err := runlog.Read(filepath.Join(project, ".baton", SessionsDir, id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestPreCompactComposesEntry(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "specs/state.yaml"), "current_phase: implement   # the user's note\n")
	tr := workSession(t, project)
	r := handle(t, EventPreCompact, payload(EventPreCompact, "s1", tr, map[string]any{"trigger": "manual"}), project, opts())
	if r.Output != nil {
		t.Fatalf("PreCompact answered %s; a composed entry lets the compaction go on", r.Output)
	}
	e, err := ledger.Latest(filepath.Join(project, "specs/ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(ledger.Render(*e))
	for _, want := range []string{"The user asked: Add a parser", "- config/parse.go", "- README.md", "Todo done: Write the parser",
		"Todo in_progress: Test the parser on bad input", "Last summary: The parser is written", "### Current phase\nimplement",
		"### Next concrete step\nTest the parser on bad input", tr + ":2"} {
		if !strings.Contains(text, want) {
			t.Errorf("composed entry lacks %q:\n%s", want, text)
		}
	}
	evs := sessionEvents(t, project, "s1")
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if strings.Join(types, ",") != "run_start,ledger_written,reset" {
		t.Fatalf("events %v", types)
	}
	if reset := evs[2]; reset.Reason != ReasonManual || !reset.LedgerTime.Equal(e.Time) || reset.ContextTokens != 4200 {
		t.Errorf("reset event %+v", reset)
	}
	if evs[1].Note != NoteComposed || evs[1].Complete == nil || !*evs[1].Complete {
		t.Errorf("ledger_written event %+v", evs[1])
	}
}

func TestPreCompactTakesTheAgentsEntry(t *testing.T) {
	project := t.TempDir()
	tr := transcript(t, userLine("first", t0), compactBoundary(t0.Add(time.Minute)), userLine("second", t0.Add(2*time.Minute)))
	agents := ledger.Entry{Phase: "build", Time: t0.Add(3 * time.Minute), CurrentPhase: "build", NextStep: "Ship it"}
	if err := ledger.Append(filepath.Join(project, "specs/ledger.md"), agents); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(project, "specs/ledger.md"))
	handle(t, EventPreCompact, payload(EventPreCompact, "s2", tr, map[string]any{"trigger": "auto"}), project, opts())
	after, _ := os.ReadFile(filepath.Join(project, "specs/ledger.md"))
	if string(before) != string(after) {
		t.Errorf("baton composed an entry though the agent wrote one since the last compaction")
	}
	evs := sessionEvents(t, project, "s2")
	if evs[1].Note != NoteByAgent || !evs[2].LedgerTime.Equal(agents.Time) || evs[2].Reason != ReasonAuto {
		t.Errorf("events %+v", evs)
	}

	// An entry older than the last compaction does not count.
	old := transcript(t, userLine("first", t0), compactBoundary(t0.Add(10*time.Minute)))
	handle(t, EventPreCompact, payload(EventPreCompact, "s3", old, nil), project, opts())
	entries, _, _ := ledger.Read(filepath.Join(project, "specs/ledger.md"))
	if len(entries) != 2 {
		t.Errorf("%d entries after a compaction with only an older entry, want 2 (one composed)", len(entries))
	}
}

func TestPreCompactStrict(t *testing.T) {
	project := t.TempDir()
	tr := workSession(t, project)
	o := opts()
	o.Strict = true
	r := handle(t, EventPreCompact, payload(EventPreCompact, "s4", tr, map[string]any{"trigger": "manual"}), project, o)
	var out struct{ Decision, Reason string }
	if err := json.Unmarshal(r.Output, &out); err != nil || out.Decision != "block" || !strings.Contains(out.Reason, "ledger_append") {
		t.Fatalf("strict manual compaction answered %s", r.Output)
	}
	if _, err := os.Stat(filepath.Join(project, "specs/ledger.md")); err == nil {
		t.Errorf("strict mode wrote a ledger entry")
	}
	// An automatic compaction is never blocked.
	r = handle(t, EventPreCompact, payload(EventPreCompact, "s4", tr, map[string]any{"trigger": "auto"}), project, o)
	if r.Output != nil {
		t.Fatalf("strict automatic compaction answered %s", r.Output)
	}
	if _, err := ledger.Latest(filepath.Join(project, "specs/ledger.md")); err != nil {
		t.Errorf("no entry composed before an automatic compaction in strict mode: %v", err)
	}
}

func TestSessionStartGivesTheLedger(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "specs/state.yaml"), "handoff:\n  next_skill: review\n  context: the parser is done\n")
	e := ledger.Entry{Phase: "build", Time: t0, CurrentPhase: "build", NextStep: "Review the parser",
		DoneSoFar: []ledger.Item{{Text: "Parser", Evidence: "config/parse.go:1"}}}
	if err := ledger.Append(filepath.Join(project, "specs/ledger.md"), e); err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{"compact", "resume", "clear"} {
		r := handle(t, EventSessionStart, payload(EventSessionStart, "s5", "", map[string]any{"source": source}), project, opts())
		ctx := additionalContext(t, r, EventSessionStart)
		for _, want := range []string{e.Heading(), "Review the parser", "next_skill: review", "the parser is done"} {
			if !strings.Contains(ctx, want) {
				t.Errorf("%s: context lacks %q:\n%s", source, want, ctx)
			}
		}
	}
	if r := handle(t, EventSessionStart, payload(EventSessionStart, "s5", "", map[string]any{"source": "startup"}), project, opts()); r.Output != nil {
		t.Errorf("startup answered %s", r.Output)
	}
	for _, ev := range sessionEvents(t, project, "s5") {
		if ev.Type == runlog.Resume && (ev.From != runlog.FromLedger || !ev.LedgerTime.Equal(t0)) {
			t.Errorf("resume event %+v", ev)
		}
	}
}

func TestSessionStartBoundsAHugeEntry(t *testing.T) {
	project := t.TempDir()
	e := ledger.Entry{Phase: "build", Time: t0, CurrentPhase: "build", NextStep: "Go on"}
	for i := range 400 {
		e.FrozenDecisions = append(e.FrozenDecisions, fmt.Sprintf("decision %d: keep the wire format of version %d for every client that reads it", i, i))
	}
	if err := ledger.Append(filepath.Join(project, "specs/ledger.md"), e); err != nil {
		t.Fatal(err)
	}
	r := handle(t, EventSessionStart, payload(EventSessionStart, "s6", "", map[string]any{"source": "compact"}), project, opts())
	ctx := additionalContext(t, r, EventSessionStart)
	if n := tokens.Count(ctx); n > DefaultResumeTokens {
		t.Errorf("resume context is %d tokens, over %d", n, DefaultResumeTokens)
	}
	if !strings.Contains(ctx, "specs/ledger.md:1") || !strings.Contains(ctx, e.Heading()) {
		t.Errorf("a cut resume context must keep the heading and point at the entry:\n%s", ctx[len(ctx)-300:])
	}
}

func additionalContext(t *testing.T, r Result, event string) string {
	t.Helper()
	var out struct {
		H struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil || out.H.Event != event {
		t.Fatalf("answer %s is not %s additional context", r.Output, event)
	}
	return out.H.Context
}

func TestThresholdOnceATurnThenMiss(t *testing.T) {
	project := t.TempDir()
	tr := transcript(t, userLine("go", t0), assistantLine(t0, 140_000, textBlock("working")))
	turn := func(id string) Result {
		return handle(t, EventUserPromptSubmit, payload(EventUserPromptSubmit, "s7", tr, map[string]any{"prompt_id": id}), project, opts())
	}
	line := additionalContext(t, turn("p1"), EventUserPromptSubmit)
	for _, want := range []string{"140000 tokens", "70%", "200000-token window", "ledger_append", "compact at the next safe point"} {
		if !strings.Contains(line, want) {
			t.Errorf("threshold line lacks %q: %s", want, line)
		}
	}
	if r := handle(t, EventPostToolUse, payload(EventPostToolUse, "s7", tr, map[string]any{"prompt_id": "p1", "tool_name": "Read"}), project, opts()); r.Output != nil {
		t.Errorf("the threshold was announced twice in one turn: %s", r.Output)
	}
	turn("p2")
	var types []string
	for _, ev := range sessionEvents(t, project, "s7") {
		types = append(types, ev.Type)
		if ev.Type == runlog.MissNote && ev.Misses != 1 {
			t.Errorf("miss note %+v", ev)
		}
	}
	if strings.Join(types, ",") != "run_start,threshold_crossed,miss_note" {
		t.Errorf("events %v", types)
	}
	// Below the threshold nothing is said.
	low := transcript(t, userLine("go", t0), assistantLine(t0, 1000, textBlock("ok")))
	if r := handle(t, EventUserPromptSubmit, payload(EventUserPromptSubmit, "s8", low, nil), project, opts()); r.Output != nil {
		t.Errorf("below the threshold: %s", r.Output)
	}
}

func TestOversizeSubagentReturn(t *testing.T) {
	project := t.TempDir()
	big := strings.Repeat("The sub-agent found another detail worth reporting in full. ", 400)
	r := handle(t, EventSubagentStop, payload(EventSubagentStop, "s9", "", map[string]any{"agent_id": "a1", "agent_type": "general-purpose", "last_assistant_message": big}), project, opts())
	if r.Output != nil {
		t.Errorf("SubagentStop answered %s", r.Output)
	}
	evs := sessionEvents(t, project, "s9")
	ev := evs[len(evs)-1]
	if ev.Type != runlog.SubagentReturn || ev.Tokens <= DefaultContractTokens || ev.ContractTokens != DefaultContractTokens || ev.SpillPath == "" {
		t.Fatalf("event %+v", ev)
	}
	if data, err := os.ReadFile(filepath.Join(project, ev.SpillPath)); err != nil || string(data) != big {
		t.Errorf("the whole return is not in %s: %v", ev.SpillPath, err)
	}
	resp, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": big}}})
	r = handle(t, EventPostToolUse, payload(EventPostToolUse, "s9", "", map[string]any{"tool_name": "Task", "tool_use_id": "toolu_9", "tool_response": json.RawMessage(resp)}), project, opts())
	line := additionalContext(t, r, EventPostToolUse)
	if !strings.Contains(line, "condensed summary") || !strings.Contains(line, ".baton/sessions/s9/spill/") {
		t.Errorf("PostToolUse on Task: %s", line)
	}
	small, _ := json.Marshal(map[string]any{"content": "short"})
	if r := handle(t, EventPostToolUse, payload(EventPostToolUse, "s9", "", map[string]any{"tool_name": "Task", "tool_response": json.RawMessage(small)}), project, opts()); r.Output != nil {
		t.Errorf("a short return: %s", r.Output)
	}
}

func TestBackgroundSubagentReturnIsToldOnTheNextHook(t *testing.T) {
	project := t.TempDir()
	big := strings.Repeat("A finding reported in full by a background agent. ", 400)
	handle(t, EventSubagentStop, payload(EventSubagentStop, "s13", "", map[string]any{"agent_id": "bg1", "agent_type": "general-purpose", "last_assistant_message": big}), project, opts())
	low := transcript(t, userLine("go", t0), assistantLine(t0, 1000, textBlock("ok")))
	r := handle(t, EventPostToolUse, payload(EventPostToolUse, "s13", low, map[string]any{"tool_name": "Read"}), project, opts())
	if line := additionalContext(t, r, EventPostToolUse); !strings.Contains(line, "the sub-agent bg1 returned") || !strings.Contains(line, "condensed summary") {
		t.Errorf("next hook after a background return: %s", line)
	}
	if r := handle(t, EventUserPromptSubmit, payload(EventUserPromptSubmit, "s13", low, nil), project, opts()); r.Output != nil {
		t.Errorf("the notice was given twice: %s", r.Output)
	}
}

func TestHookBadInput(t *testing.T) {
	project := t.TempDir()
	for _, in := range []string{"", "not json", `{"hook_event_name":"PreCompact"}`, `[1,2]`} {
		_, err := Handle(context.Background(), EventPreCompact, []byte(in), project, opts())
		if !errors.Is(err, ErrBadPayload) || strings.Contains(err.Error(), "\n") {
			t.Errorf("input %q: %v, want one line wrapping ErrBadPayload", in, err)
		}
	}
	if _, err := Handle(context.Background(), "Nonsense", payload("Nonsense", "s", "", nil), project, opts()); err == nil || !strings.Contains(err.Error(), "unknown hook event") {
		t.Errorf("unknown event: %v", err)
	}
	entries, _ := os.ReadDir(project)
	if len(entries) != 0 {
		t.Errorf("bad input wrote %v", entries)
	}
}

func TestPreCompactMissingTranscript(t *testing.T) {
	project := t.TempDir()
	r := handle(t, EventPreCompact, payload(EventPreCompact, "s10", filepath.Join(project, "gone.jsonl"), nil), project, opts())
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "context is unknown") {
		t.Errorf("notes %v", r.Notes)
	}
	if _, err := ledger.Latest(filepath.Join(project, "specs/ledger.md")); err != nil {
		t.Errorf("no entry composed without a transcript: %v", err)
	}
}

func TestHugeTranscriptIsReadFromItsEnd(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	filler, _ := json.Marshal(userLine(strings.Repeat("x", 100_000), t0))
	for range (MaxTranscriptRead / len(filler)) * 2 {
		f.Write(append(filler, '\n'))
	}
	last, _ := json.Marshal(assistantLine(t0, 123_456, textBlock("the end")))
	f.Write(append(last, '\n'))
	f.Close()
	tr, err := ReadTranscript(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Truncated || tr.ContextTokens() != 123_456 || tr.LastSummary.Text != "the end" {
		t.Errorf("truncated %v, context %d, last %q", tr.Truncated, tr.ContextTokens(), tr.LastSummary.Text)
	}
}

func TestPreCompactUnwritableLedger(t *testing.T) {
	project := t.TempDir()
	// specs is a file, so the ledger cannot be created under it (a
	// read-only folder would not stop a test run as root).
	writeFile(t, filepath.Join(project, "specs"), "not a folder")
	tr := workSession(t, project)
	r, err := Handle(context.Background(), EventPreCompact, payload(EventPreCompact, "s11", tr, nil), project, opts())
	if err == nil || strings.Contains(err.Error(), "\n") || r.Output != nil {
		t.Fatalf("unwritable ledger: output %s, err %v; want one line and no answer", r.Output, err)
	}
	kept, err := os.ReadFile(filepath.Join(project, ".baton", SessionsDir, "s11", pendingLedger))
	if err != nil || !strings.Contains(string(kept), "config/parse.go") {
		t.Errorf("the composed entry was lost: %v", err)
	}
}

func TestPreCompactLedgerLockHeld(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, "specs/ledger.md")
	unlock, err := filelock.Lock(path) // as a baton run appending would
	if err != nil {
		t.Fatal(err)
	}
	tr := workSession(t, project)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Handle(ctx, EventPreCompact, payload(EventPreCompact, "s12", tr, nil), project, opts())
	if err == nil || !strings.Contains(err.Error(), "time limit") {
		t.Fatalf("with the ledger locked: %v", err)
	}
	pending := filepath.Join(project, ".baton", SessionsDir, "s12", pendingLedger)
	if data, err := os.ReadFile(pending); err != nil || !strings.Contains(string(data), "config/parse.go") {
		t.Fatalf("the composed entry is not kept while the ledger is locked: %v", err)
	}
	unlock()
	// The append waiting for the lock goes through once it is free (the
	// deadline only catches a hang, however busy the machine).
	deadline := time.Now().Add(60 * time.Second)
	for {
		if e, err := ledger.Latest(path); err == nil && strings.Contains(strings.Join(e.Artifacts, " "), "config/parse.go") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entry never reached the ledger after the lock was released")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConfineRefusesTrustedPaths(t *testing.T) {
	project := t.TempDir()
	for _, p := range []string{"../ledger.md", "/etc/ledger.md", ".git/ledger.md", ".claude/ledger.md", ".baton/x.md", "skills/a/SKILL.md", "baton.yaml", ".codex/l.md", ".GIT/ledger.md", ".g\u200cit/ledger.md", "Baton.YAML", ".claude./ledger.md"} {
		if _, err := confine(project, p); err == nil {
			t.Errorf("confine accepted %q", p)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(project, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := confine(project, "out/ledger.md"); err == nil {
		t.Errorf("confine accepted a path through a symlink out of the project")
	}
	if _, err := confine(project, "docs/ledger.md"); err != nil {
		t.Errorf("confine refused docs/ledger.md: %v", err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two compactions within one second and no entry of the agent's between
// them: the entry baton composed for the first covers only the first, so
// the second gets its own. (Headings have whole seconds; the composed
// entry once passed for one written since the first compaction.)
func TestPreCompactTwiceComposesTwice(t *testing.T) {
	project := t.TempDir()
	tr := workSession(t, project)
	for range 2 {
		handle(t, EventPreCompact, payload(EventPreCompact, "s1", tr, map[string]any{"trigger": "auto"}), project, opts())
	}
	entries, _, err := ledger.Read(filepath.Join(project, "specs/ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d ledger entries after two compactions with none of the agent's, want 2", len(entries))
	}
	evs := sessionEvents(t, project, "s1")
	composed := 0
	for _, ev := range evs {
		if ev.Type == runlog.LedgerWritten && ev.Note == NoteComposed {
			composed++
		}
	}
	if composed != 2 {
		t.Errorf("%d entries recorded as composed by baton, want 2", composed)
	}
}
