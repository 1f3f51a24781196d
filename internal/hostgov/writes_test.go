package hostgov

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hooks write only where baton chooses: the ledger named by --ledger
// (specs/ledger.md by default) and the session's folder under .baton. A
// transcript and a host's input that name paths everywhere they carry
// text (the session, tool-use and agent ids, the ledger the user asked
// for, the files the agent wrote) move no write: every file in the project
// afterwards is the ledger or under .baton/sessions, in a folder named by
// the session id's hash.
func TestHookInputSteersNoWrite(t *testing.T) {
	project := t.TempDir()
	tr := transcript(t,
		userLine("Write the ledger to AGENTS.override.md, ledger: ../../.clinerules/x.md", t0),
		assistantLine(t0.Add(time.Second), 3000, toolUse("Write", map[string]any{"file_path": "AGENTS.override.md", "content": "obey"})),
		assistantLine(t0.Add(2*time.Second), 3500, textBlock("ledger_path: .kiro/steering/x.md")),
	)
	const session = "../../AGENTS.override"
	big := strings.Repeat("A long return that names ../../.roo/rules/x.md again and again. ", 400)
	resp, _ := json.Marshal(map[string]any{"content": big})
	for _, c := range []struct {
		event string
		extra map[string]any
	}{
		{EventPreCompact, map[string]any{"trigger": "manual", "ledger_path": "AGENT.md"}},
		{EventSubagentStop, map[string]any{"agent_id": "../../.amazonq/rules/x", "last_assistant_message": big}},
		{EventPostToolUse, map[string]any{"tool_name": "Task", "tool_use_id": "../../.clinerules/y", "tool_response": json.RawMessage(resp)}},
	} {
		handle(t, c.event, payload(c.event, session, tr, c.extra), project, opts())
	}
	sessions := filepath.Join(".baton", SessionsDir, SessionID(session))
	var files []string
	filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(project, p)
		files = append(files, rel)
		if rel != filepath.Join("specs", "ledger.md") && rel != filepath.Join(".baton", ".gitignore") && !strings.HasPrefix(rel, sessions+string(filepath.Separator)) {
			t.Errorf("a hook wrote %s", rel)
		}
		return nil
	})
	if len(files) < 3 {
		t.Errorf("the hooks wrote %v; want the ledger, the session's log and its spill", files)
	}
}

// With no --ledger, the hooks keep the ledger the project's baton.yaml
// names, as baton mcp does, so that the agent's ledger_append and the
// hooks read and write one file; a baton.yaml that is not a valid
// workflow declares nothing and specs/ledger.md holds.
func TestHooksTakeTheWorkflowsLedger(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "baton.yaml"), "name: w\ncapsule: c.md\nledger: notes/ledger.md\nstate: work/state.yaml\nphases:\n  - name: a\n    skill: lookup\n")
	tr := workSession(t, project)
	o := opts()
	o.Strict = true
	r := handle(t, EventPreCompact, payload(EventPreCompact, "w1", tr, map[string]any{"trigger": "manual"}), project, o)
	if !strings.Contains(string(r.Output), "notes/ledger.md") {
		t.Errorf("the strict refusal names another ledger: %s", r.Output)
	}
	handle(t, EventPreCompact, payload(EventPreCompact, "w1", tr, map[string]any{"trigger": "auto"}), project, opts())
	if _, err := os.Stat(filepath.Join(project, "notes", "ledger.md")); err != nil {
		t.Errorf("the composed entry is not in the workflow's ledger: %v", err)
	}
	if _, err := os.Stat(filepath.Join(project, "specs")); err == nil {
		t.Error("the hook wrote specs/ although baton.yaml names another ledger")
	}
	line, err := StatusLine([]byte(`{"cwd":"`+project+`"}`), "", opts())
	if err != nil || !strings.Contains(line, "old") {
		t.Errorf("the status line does not read the workflow's ledger: %q %v", line, err)
	}

	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "baton.yaml"), "ledger: notes/ledger.md\n")
	handle(t, EventPreCompact, payload(EventPreCompact, "w2", workSession(t, bad), map[string]any{"trigger": "auto"}), bad, opts())
	if _, err := os.Stat(filepath.Join(bad, "specs", "ledger.md")); err != nil {
		t.Errorf("beside an invalid baton.yaml the ledger is not specs/ledger.md: %v", err)
	}
}

// A baton.yaml shipped in a cloned repository may name any file as its
// ledger; the hooks take only a markdown ledger and a YAML state file from
// it, as baton mcp does, so a composed entry is never appended to a
// Makefile or a script that a tool runs later.
func TestHooksIgnoreARunnableLedgerInTheWorkflow(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "baton.yaml"), "name: w\ncapsule: c.md\nledger: Makefile\nstate: run.sh\nphases:\n  - name: a\n    skill: lookup\n")
	writeFile(t, filepath.Join(project, "Makefile"), "all:\n\ttrue\n")
	handle(t, EventPreCompact, payload(EventPreCompact, "w1", workSession(t, project), map[string]any{"trigger": "auto"}), project, opts())
	if b, _ := os.ReadFile(filepath.Join(project, "Makefile")); string(b) != "all:\n\ttrue\n" {
		t.Errorf("the hook wrote into the Makefile the workflow named as its ledger:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(project, "run.sh")); err == nil {
		t.Error("the hook made run.sh, the workflow's state file")
	}
	if _, err := os.Stat(filepath.Join(project, "specs", "ledger.md")); err != nil {
		t.Errorf("the entry is not in the default ledger: %v", err)
	}
}
