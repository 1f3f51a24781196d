package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/history"
)

func TestHookCommandLetsTheHostGoOn(t *testing.T) {
	isolateEnv(t)
	project := t.TempDir()
	t.Setenv("CLAUDE_PROJECT_DIR", project)
	for _, in := range []string{"", "{not json", `{"hook_event_name":"PreCompact"}`, strings.Repeat("x", 100)} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"hook", "PreCompact"}, strings.NewReader(in), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 0 || stdout.Len() != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "baton hook PreCompact: ") {
			t.Errorf("input %q: exit %d, stdout %q, stderr %q; want 0, nothing, one line", in, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"hook", "NoSuchEvent"}, strings.NewReader(`{"session_id":"s"}`), &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "unknown hook event") {
		t.Errorf("unknown event: exit %d, stderr %q", code, stderr.String())
	}
}

func TestHookCommandRecordsTheSession(t *testing.T) {
	isolateEnv(t)
	project := t.TempDir()
	t.Setenv("CLAUDE_PROJECT_DIR", project)
	in, _ := json.Marshal(map[string]string{"session_id": "sess-1", "hook_event_name": "PreCompact", "trigger": "manual",
		"transcript_path": filepath.Join(project, "missing.jsonl"), "cwd": project})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"hook", "PreCompact"}, bytes.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(project, "specs", "ledger.md")); err != nil {
		t.Fatalf("no ledger entry: %v\n%s", err, stderr.String())
	}
	db, err := history.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.List(history.Filter{Kind: history.KindSession})
	if err != nil || len(runs) != 1 || runs[0].ID != "sess-1" || runs[0].Status != history.StatusUnfinished ||
		!strings.Contains(runs[0].Title, "1 compactions") || !strings.Contains(runs[0].Title, "1 composed by baton") {
		t.Fatalf("history sessions %+v, %v", runs, err)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"ledger", "lint", "--session", "sess-1", "--workspace", project}, nil, &stdout, &stderr); code != 0 {
		t.Errorf("ledger lint --session: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

func TestLedgerLintFlagsACompactionWithoutEntry(t *testing.T) {
	project := t.TempDir()
	log := filepath.Join(project, ".baton", "sessions", "s1", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	events := `{"time":"2026-12-01T10:00:00Z","run":"s1","type":"run_start","ledger_path":"specs/ledger.md","note":"claude-code session s1"}
{"time":"2026-12-01T10:05:00Z","run":"s1","type":"reset","reason":"auto","mode":"compact","context_tokens":150000,"window_tokens":200000}
`
	if err := os.WriteFile(log, []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"ledger", "lint", "--session", "s1", "--workspace", project}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "reset-without-ledger") {
		t.Errorf("exit %d, stdout %q", code, stdout.String())
	}
	if code := run(context.Background(), []string{"ledger", "lint", "--session", "../x"}, nil, &stdout, &stderr); code != 2 {
		t.Errorf("a session id with a path: exit %d", code)
	}
}
