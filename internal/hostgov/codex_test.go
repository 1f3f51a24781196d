package hostgov

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
)

// codexRollout is a Codex session file: its turn context, the user's
// message, an apply_patch call, the token count with the host's window,
// and the agent's last message.
func codexRollout(t *testing.T, input int) string {
	patch, _ := json.Marshal(map[string]string{"input": "*** Begin Patch\n*** Add File: src/lib.rs\n+fn main() {}\n*** End Patch\n"})
	return transcript(t,
		map[string]any{"timestamp": t0, "type": "session_meta", "payload": map[string]any{"id": "c1", "cwd": "/p"}},
		map[string]any{"timestamp": t0, "type": "turn_context", "payload": map[string]any{"model": "gpt-5.1-codex", "cwd": "/p"}},
		map[string]any{"timestamp": t0, "type": "event_msg", "payload": map[string]any{"type": "user_message", "message": "Port the CLI to Rust"}},
		map[string]any{"timestamp": t0, "type": "response_item", "payload": map[string]any{"type": "function_call", "name": "apply_patch", "arguments": string(patch)}},
		map[string]any{"timestamp": t0, "type": "event_msg", "payload": map[string]any{"type": "token_count",
			"info": map[string]any{"last_token_usage": map[string]int{"input_tokens": input, "cached_input_tokens": input / 2, "output_tokens": 10}, "model_context_window": 272_000}}},
		map[string]any{"timestamp": t0, "type": "event_msg", "payload": map[string]any{"type": "agent_message", "message": "The entry point is ported."}},
	)
}

// codexPayload is a hook input of the shape Codex documents for its
// compact and session hooks: session id, turn id, transcript path, cwd,
// event name, model and the event's own field.
func codexHookInput(event, tr string, extra map[string]any) []byte {
	m := map[string]any{"session_id": "019a-codex-session", "turn_id": "turn-3", "transcript_path": tr, "cwd": "/p",
		"hook_event_name": event, "model": "gpt-5.1-codex"}
	for k, v := range extra {
		m[k] = v
	}
	data, _ := json.Marshal(m)
	return data
}

func TestCodexCompaction(t *testing.T) {
	project := t.TempDir()
	o := opts()
	o.Host = HostCodex
	tr := codexRollout(t, 200_000)
	handle(t, EventPreCompact, codexHookInput(EventPreCompact, tr, map[string]any{"trigger": "auto"}), project, o)
	e, err := ledger.Latest(filepath.Join(project, "specs/ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(ledger.Render(*e))
	for _, want := range []string{"The user asked: Port the CLI to Rust", "- src/lib.rs", "Last summary: The entry point is ported.", "auto compaction"} {
		if !strings.Contains(text, want) {
			t.Errorf("entry lacks %q:\n%s", want, text)
		}
	}
	handle(t, EventPostCompact, codexHookInput(EventPostCompact, tr, map[string]any{"trigger": "auto"}), project, o)
	r := handle(t, EventSessionStart, codexHookInput(EventSessionStart, tr, map[string]any{"source": "compact"}), project, o)
	if ctx := additionalContext(t, r, EventSessionStart); !strings.Contains(ctx, e.Heading()) {
		t.Errorf("Codex SessionStart after a compaction lacks the entry:\n%s", ctx)
	}
	evs := sessionEvents(t, project, "019a-codex-session")
	if evs[0].Note != "codex session 019a-codex-session" {
		t.Errorf("run_start note %q", evs[0].Note)
	}
	var reset runlog.Event
	for _, ev := range evs {
		if ev.Type == runlog.Reset {
			reset = ev
		}
	}
	// Codex gives the window in its token counts: 200k of 272k.
	if reset.WindowTokens != 272_000 || reset.ContextTokens != 200_000 || reset.Reason != ReasonAuto {
		t.Errorf("reset %+v", reset)
	}
}

func TestCodexThreshold(t *testing.T) {
	project := t.TempDir()
	o := opts()
	o.Host = HostCodex
	r := handle(t, EventUserPromptSubmit, codexHookInput(EventUserPromptSubmit, codexRollout(t, 200_000), map[string]any{"prompt": "go on"}), project, o)
	if line := additionalContext(t, r, EventUserPromptSubmit); !strings.Contains(line, "272000-token window") {
		t.Errorf("threshold line %s", line)
	}
	if r := handle(t, EventUserPromptSubmit, codexHookInput(EventUserPromptSubmit, codexRollout(t, 100_000), map[string]any{"turn_id": "turn-4"}), project, o); r.Output != nil {
		t.Errorf("below the threshold: %s", r.Output)
	}
}

func TestStatusLine(t *testing.T) {
	project := t.TempDir()
	if err := ledger.Append(filepath.Join(project, "specs/ledger.md"), ledger.Entry{Phase: "p", Time: t0.Add(-30 * time.Minute), CurrentPhase: "p", NextStep: "n"}); err != nil {
		t.Fatal(err)
	}
	o := Options{Now: func() time.Time { return t0 }}
	in, _ := json.Marshal(map[string]any{"model": map[string]string{"id": "claude-sonnet-4-5"}, "workspace": map[string]string{"project_dir": project},
		"context_window": map[string]any{"used_percentage": 70.0, "context_window_size": 200_000}})
	line, err := StatusLine(in, "", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ctx 70% of 200k", "threshold 65%", "past it", "ledger 30m old"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	// Without the host's figures the transcript is measured.
	tr := transcript(t, userLine("go", t0), assistantLine(t0, 20_000, textBlock("ok")))
	in, _ = json.Marshal(map[string]any{"transcript_path": tr, "cwd": t.TempDir()})
	line, err = StatusLine(in, "", o)
	if err != nil || !strings.Contains(line, "ctx 10% of 200k") || !strings.Contains(line, "no ledger entry") || strings.Contains(line, "past it") {
		t.Errorf("status line %q, %v", line, err)
	}
	if _, err := StatusLine([]byte("{"), "", o); err == nil {
		t.Errorf("bad input gave no error")
	}
}
