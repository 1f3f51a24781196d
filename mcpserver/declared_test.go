package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// connectDeclared is connectIn with the ledgers and state files the
// server may write.
func connectDeclared(t *testing.T, dir string, ledgers, states []string) (*mcp.ClientSession, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return serve(t, mcpserver.Config{Root: dir, Version: "test", Ledgers: ledgers, States: states}, nil), dir
}

// otherAgentsFiles are instruction files of other agents that a host's
// ledger_append wrote before the allow-list: each is read by a coding agent
// as its orders.
var otherAgentsFiles = []string{
	"AGENTS.override.md", "AGENT.md", ".clinerules/x.md", ".kiro/steering/x.md",
	".roo/rules/x.md", ".amazonq/rules/x.md",
}

// ledger_append writes only the ledgers the server was given: other
// agents' instruction files and any markdown file nobody declared are
// refused with one line, and nothing under the root changes, not even a
// folder; the default ledger still takes entries.
func TestLedgerAppendWritesOnlyDeclaredLedgers(t *testing.T) {
	cs, dir := connectIn(t, t.TempDir())
	before := tree(t, dir)
	for _, p := range append(otherAgentsFiles, "notes.md", "docs/other.md", "README.md") {
		text := toolError(t, cs, "ledger_append", pathArgs["ledger_append"][0](p))
		if !strings.Contains(text, p) {
			t.Errorf("ledger_append %s: %q does not name the path", p, text)
		}
	}
	// A file no deny-list names is refused by the allow-list, in words
	// that say how to declare it.
	text := toolError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("docs/other.md"))
	want := "ledger_append: docs/other.md is not a ledger this server may write (allowed: specs/ledger.md); start baton mcp with --ledger docs/other.md or name it as ledger: in baton.yaml"
	if text != want {
		t.Errorf("refusal:\n got %q\nwant %q", text, want)
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("refused appends changed the root (-before +after):\n%s", diff)
	}
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Ledger != "specs/ledger.md" || app.Entries != 1 {
		t.Errorf("the default ledger: %s %+v", resultText(res), app)
	}
	// ./specs//ledger.md is the same declared file.
	if res := call(t, cs, "ledger_append", pathArgs["ledger_append"][0]("./specs//ledger.md"), &app); res.IsError || app.Entries != 2 {
		t.Errorf("the default ledger spelled ./specs//ledger.md: %s %+v", resultText(res), app)
	}
}

// A ledger given to the server (Config.Ledgers, baton mcp --ledger) is
// writable, is the default of every ledger tool, and replaces the default
// ledger, which is then refused.
func TestLedgerDeclaredByConfig(t *testing.T) {
	dir := t.TempDir()
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test", Ledgers: []string{"other.md", "notes/second.md"}}, nil)
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", pathArgs["ledger_append"][0]("other.md"), &app); res.IsError || app.Ledger != "other.md" {
		t.Fatalf("a declared ledger: %s %+v", resultText(res), app)
	}
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Ledger != "other.md" || app.Entries != 2 {
		t.Errorf("no ledger argument: %s %+v; want the first declared ledger", resultText(res), app)
	}
	if res := call(t, cs, "ledger_append", pathArgs["ledger_append"][0]("notes/second.md"), &app); res.IsError || app.Entries != 1 {
		t.Errorf("the second declared ledger: %s %+v", resultText(res), app)
	}
	var latest mcpserver.LedgerLatestOut
	if res := call(t, cs, "ledger_latest", map[string]any{}, &latest); res.IsError || latest.Entries != 2 {
		t.Errorf("ledger_latest without a ledger: %s %+v; want other.md's two entries", resultText(res), latest)
	}
	wantError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("specs/ledger.md"),
		"specs/ledger.md is not a ledger this server may write (allowed: other.md, notes/second.md)")
	if _, err := os.Stat(filepath.Join(dir, "specs")); !os.IsNotExist(err) {
		t.Errorf("a refused append made specs/: %v", err)
	}
}

// state_set writes only the state files the server was given: a file
// named like a state file that nobody declared is refused and not made,
// the default one is set, and a declared one is set.
func TestStateSetWritesOnlyDeclaredStates(t *testing.T) {
	dir := t.TempDir()
	cs, _ := connectIn(t, dir)
	before := tree(t, dir)
	for _, p := range []string{"work/run-state.yaml", "state.yaml", "config/app.state.yml"} {
		wantError(t, cs, "state_set", map[string]any{"state": p, "key": "handoff.next_step", "value": "x"},
			"state_set: "+p+" is not a state file this server may write (allowed: specs/state.yaml); start baton mcp with --state "+p+" or name it as state: in baton.yaml")
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("refused sets changed the root (-before +after):\n%s", diff)
	}
	var out mcpserver.StateSetOut
	if res := call(t, cs, "state_set", map[string]any{"key": "handoff.next_step", "value": "x"}, &out); res.IsError || out.State != "specs/state.yaml" {
		t.Errorf("the default state file: %s %+v", resultText(res), out)
	}

	dir = t.TempDir()
	cs = serve(t, mcpserver.Config{Root: dir, Version: "test", States: []string{"work/cockpit.yaml"}}, nil)
	if res := call(t, cs, "state_set", map[string]any{"state": "work/cockpit.yaml", "key": "a", "value": 1}, &out); res.IsError || !out.Changed {
		t.Errorf("a declared state file: %s %+v", resultText(res), out)
	}
	if res := call(t, cs, "state_set", map[string]any{"key": "b", "value": 2}, &out); res.IsError || out.State != "work/cockpit.yaml" {
		t.Errorf("no state argument: %s %+v; want the declared file", resultText(res), out)
	}
	wantError(t, cs, "state_set", map[string]any{"key": "a", "value": 1, "state": "specs/state.yaml"}, "allowed: work/cockpit.yaml")
	if got, _ := os.ReadFile(filepath.Join(dir, "work/cockpit.yaml")); string(got) != "a: 1\nb: 2\n" {
		t.Errorf("work/cockpit.yaml: %q", got)
	}
}

// The root's baton.yaml declares the ledger and the state file when the
// server is given none; a baton.yaml that baton run would refuse declares
// nothing, the defaults hold, and a refusal says why.
func TestWritesDeclaredByTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	wf := "name: w\ncapsule: capsule.md\nstate: work/cockpit.yaml\nledger: notes/ledger.md\nphases:\n  - name: a\n    skill: lookup\n"
	os.WriteFile(filepath.Join(dir, "baton.yaml"), []byte(wf), 0o644)
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Ledger != "notes/ledger.md" {
		t.Errorf("the workflow's ledger: %s %+v", resultText(res), app)
	}
	var out mcpserver.StateSetOut
	if res := call(t, cs, "state_set", map[string]any{"key": "a", "value": 1}, &out); res.IsError || out.State != "work/cockpit.yaml" {
		t.Errorf("the workflow's state file: %s %+v", resultText(res), out)
	}
	wantError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("specs/ledger.md"), "allowed: notes/ledger.md")
	wantError(t, cs, "state_set", map[string]any{"state": "specs/state.yaml", "key": "a", "value": 1}, "allowed: work/cockpit.yaml")

	// The server's own list wins over the workflow's, kind by kind.
	cs = serve(t, mcpserver.Config{Root: dir, Version: "test", Ledgers: []string{"mine.md"}}, nil)
	wantError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("notes/ledger.md"), "allowed: mine.md")
	if res := call(t, cs, "state_set", map[string]any{"key": "a", "value": 2}, &out); res.IsError || out.State != "work/cockpit.yaml" {
		t.Errorf("the workflow's state file beside --ledger: %s %+v", resultText(res), out)
	}

	// Without name, capsule and phases the file is not a workflow.
	os.WriteFile(filepath.Join(dir, "baton.yaml"), []byte("state: work/cockpit.yaml\nledger: notes/ledger.md\n"), 0o644)
	cs = serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	wantError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("notes/ledger.md"),
		"allowed: specs/ledger.md, the default, since the root's baton.yaml is not a valid workflow", "name: is required")
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Ledger != "specs/ledger.md" {
		t.Errorf("the default ledger beside an invalid baton.yaml: %s %+v", resultText(res), app)
	}
}

// A list given to the server is checked when it starts: relative, inside
// the root, of the right kind of file, and not a file the write policy
// denies.
func TestDeclaredPathsAreChecked(t *testing.T) {
	for _, c := range []struct {
		cfg  mcpserver.Config
		want string
	}{
		{mcpserver.Config{Ledgers: []string{"/tmp/ledger.md"}}, "absolute"},
		{mcpserver.Config{Ledgers: []string{"../ledger.md"}}, "escapes"},
		{mcpserver.Config{Ledgers: []string{"a/../../ledger.md"}}, "escapes"},
		{mcpserver.Config{Ledgers: []string{"notes.txt"}}, ".md"},
		{mcpserver.Config{Ledgers: []string{""}}, "empty"},
		{mcpserver.Config{Ledgers: []string{".git/ledger.md"}}, "denied"},
		{mcpserver.Config{Ledgers: []string{"AGENTS.override.md"}}, "denied"},
		{mcpserver.Config{States: []string{"state.md"}}, ".yaml"},
		{mcpserver.Config{States: []string{"baton.yaml"}}, "denied"},
		{mcpserver.Config{States: []string{"../state.yaml"}}, "escapes"},
	} {
		c.cfg.Root = t.TempDir()
		s, err := mcpserver.New(c.cfg)
		if err == nil {
			s.Close()
			t.Errorf("New(%v %v): no error", c.cfg.Ledgers, c.cfg.States)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%v %v): %q, want one line naming %q", c.cfg.Ledgers, c.cfg.States, err, c.want)
		}
	}
}
