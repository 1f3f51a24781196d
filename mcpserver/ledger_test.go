package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/internal/filelock"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/mcpserver"
)

func fullEntry() map[string]any {
	return map[string]any{
		"phase":            "implement",
		"time":             "2026-03-04T05:06:07+02:00",
		"frozen_decisions": []string{"The run log is JSON Lines.", "No new dependencies."},
		"done_so_far": []map[string]any{
			{"text": "Parser for the ledger", "evidence": "ledger/parse.go:40"},
			{"text": "Tests pass", "evidence": "`go test ./ledger/`"},
		},
		"artifacts":     []string{"ledger/ledger.go"},
		"current_phase": "implement",
		"next_step":     "Write the lint rules for resets.",
		"open_tickets":  []string{},
	}
}

// An entry appended and read back through the file is exactly the entry
// given, field by field; an empty list is stored as none and comes back
// empty; a later entry is the latest.
func TestLedgerAppendThenLatest(t *testing.T) {
	cs, dir := connectDeclared(t, t.TempDir(), []string{"specs/ledger.md", "notes/other.md"}, nil)
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError {
		t.Fatalf("append: %v", res.Content)
	}
	want := mcpserver.LedgerEntry{
		Heading:         "## Ledger — implement — 2026-03-04T05:06:07+02:00",
		Phase:           "implement",
		Time:            "2026-03-04T05:06:07+02:00",
		FrozenDecisions: []string{"The run log is JSON Lines.", "No new dependencies."},
		DoneSoFar: []mcpserver.LedgerItem{
			{Text: "Parser for the ledger", Evidence: "ledger/parse.go:40"},
			{Text: "Tests pass", Evidence: "`go test ./ledger/`"},
		},
		Artifacts:    []string{"ledger/ledger.go"},
		CurrentPhase: "implement",
		NextStep:     "Write the lint rules for resets.",
		OpenTickets:  []string{},
	}
	if app.Ledger != "specs/ledger.md" || app.Entries != 1 {
		t.Errorf("append: ledger %q, entries %d", app.Ledger, app.Entries)
	}
	if d := cmp.Diff(want, app.Entry); d != "" {
		t.Errorf("appended entry (-want +got):\n%s", d)
	}
	var latest mcpserver.LedgerLatestOut
	call(t, cs, "ledger_latest", map[string]any{}, &latest)
	if !latest.Found || latest.Entries != 1 || latest.Entry == nil {
		t.Fatalf("latest: %+v", latest)
	}
	if d := cmp.Diff(want, *latest.Entry); d != "" {
		t.Errorf("latest entry (-want +got):\n%s", d)
	}
	// The file is the ledger format, read by the ledger package as the
	// same entry.
	data, err := os.ReadFile(filepath.Join(dir, "specs/ledger.md"))
	if err != nil || !strings.Contains(string(data), "### Open tickets / misses\nnone\n") {
		t.Fatalf("ledger file (err %v):\n%s", err, data)
	}
	entries, problems, err := ledger.Read(filepath.Join(dir, "specs/ledger.md"))
	if err != nil || len(problems) > 0 || len(entries) != 1 || !entries[0].Complete() || entries[0].NextStep != want.NextStep {
		t.Fatalf("ledger.Read: %v %v %+v", err, problems, entries)
	}

	later := fullEntry()
	later["ledger"] = "notes/other.md"
	later["phase"] = "review"
	delete(later, "time") // now
	before := time.Now().UTC().Truncate(time.Second)
	call(t, cs, "ledger_append", later, &app)
	later["ledger"] = "specs/ledger.md"
	call(t, cs, "ledger_append", later, &app)
	if app.Entries != 2 || app.Entry.Phase != "review" {
		t.Errorf("second append: %+v", app)
	}
	if at, err := time.Parse(time.RFC3339, app.Entry.Time); err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("time of an entry given none: %q, want now", app.Entry.Time)
	}
	call(t, cs, "ledger_latest", map[string]any{"ledger": "specs/ledger.md"}, &latest)
	if !latest.Found || latest.Entries != 2 || latest.Entry.Phase != "review" {
		t.Errorf("latest after two: %+v", latest)
	}
	call(t, cs, "ledger_latest", map[string]any{"ledger": "notes/other.md"}, &latest)
	if !latest.Found || latest.Entries != 1 || latest.Entry.Phase != "review" {
		t.Errorf("latest of the other ledger: %+v", latest)
	}
}

// An incomplete entry is refused naming every missing field in the
// ledger's words and the input's, and nothing is written, not even the
// ledger's folder.
func TestLedgerAppendIncomplete(t *testing.T) {
	cs, dir := connectIn(t, t.TempDir())
	text := toolError(t, cs, "ledger_append", map[string]any{
		"done_so_far": []map[string]any{{"text": "Parser"}, {"evidence": "x.go:1"}},
		"next_step":   "  ",
		"time":        "2026-03-04T05:06:07Z",
	})
	for _, w := range []string{
		"phase in the heading (phase)",
		"Frozen decisions (frozen_decisions)",
		"Artifacts (artifacts)",
		"Open tickets / misses (open_tickets)",
		"Current phase (current_phase)",
		"Next concrete step (next_step)",
		"evidence for Done so far item 1 (Parser) (done_so_far[0].evidence)",
		"text for Done so far item 2 (done_so_far[1].text)",
		"nothing was written",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("refusal %q does not name %q", text, w)
		}
	}
	if strings.Contains(text, "Done so far (done_so_far)") {
		t.Errorf("refusal %q names done_so_far, which was given", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "specs")); !os.IsNotExist(err) {
		t.Errorf("an incomplete entry created specs/: %v", err)
	}
	// An empty list given explicitly is none, not missing.
	e := fullEntry()
	e["frozen_decisions"], e["done_so_far"], e["artifacts"] = []string{}, []string{}, []string{}
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", e, &app); res.IsError || len(app.Entry.FrozenDecisions) != 0 {
		t.Errorf("an entry of empty lists: %v %+v", res.Content, app)
	}
	// A wrong type is the SDK's validator's refusal; it still names the field.
	wantError(t, cs, "ledger_append", map[string]any{"frozen_decisions": "one"}, "frozen_decisions")
	wantError(t, cs, "ledger_append", map[string]any{"time": "yesterday"}, "yesterday", "RFC 3339")
	e = fullEntry()
	e["artifacts"] = []string{"a.go", " "}
	wantError(t, cs, "ledger_append", e, "artifacts[1] is empty")
}

// The ledger tools refuse a path out of the root (by .., absolute, or a
// symlinked folder or file), a missing ledger and an unreadable one, with
// one line each, writing nothing outside; and the server goes on serving.
func TestLedgerBadPaths(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "ledger.md"), []byte("# secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(outside, "ledger.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sibling.md"), []byte("# sibling\n"), 0o644)
	os.Symlink("sibling.md", filepath.Join(dir, "inside-link.md"))
	os.WriteFile(filepath.Join(dir, "binary.md"), []byte("\x00\x01"), 0o644)
	// The paths out are declared, so that what refuses them is the second
	// line: the root's confinement.
	cs, _ := connectDeclared(t, dir, []string{"specs/ledger.md", "out/ledger.md", "out/new.md", "out/sub/new.md", "link.md", "inside-link.md"}, nil)
	for _, c := range []struct {
		path string
		want string
	}{
		{"../x.md", "escapes"},
		{"/etc/passwd", "absolute"},
		{filepath.Join(outside, "ledger.md"), "absolute"},
		{"out/ledger.md", "escapes"},
		{"out/new.md", "escapes"},
		{"out/sub/new.md", "escapes"},
		{"link.md", "escapes"},
		{"inside-link.md", "symlink"},
	} {
		args := fullEntry()
		args["ledger"] = c.path
		wantError(t, cs, "ledger_append", args, c.path, c.want)
		wantError(t, cs, "ledger_latest", map[string]any{"ledger": c.path}, c.path)
		wantError(t, cs, "ledger_lint", map[string]any{"ledger": c.path}, c.path)
	}
	wantError(t, cs, "ledger_latest", map[string]any{"ledger": "missing.md"}, "missing.md", "no such file")
	wantError(t, cs, "ledger_latest", map[string]any{}, "specs/ledger.md")
	wantError(t, cs, "ledger_latest", map[string]any{"ledger": "binary.md"}, "binary.md", "malformed")
	wantError(t, cs, "ledger_lint", map[string]any{"ledger": "missing.md"}, "missing.md")
	wantError(t, cs, "ledger_lint", map[string]any{}, "nothing to check")
	got, _ := os.ReadFile(filepath.Join(outside, "ledger.md"))
	names, _ := os.ReadDir(outside)
	if string(got) != "# secret\n" || len(names) != 1 {
		t.Errorf("the folder outside the root changed: %d files, ledger %q", len(names), got)
	}
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Entries != 1 {
		t.Errorf("after the refusals: %v %+v", res.Content, app)
	}
}

// ledger_append waits for the ledger's lock, which `baton run` holds while
// it appends.
func TestLedgerAppendTakesTheLock(t *testing.T) {
	cs, dir := connectIn(t, t.TempDir())
	path := filepath.Join(dir, "specs/ledger.md")
	unlock, err := filelock.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan mcpserver.LedgerAppendOut)
	go func() {
		var out mcpserver.LedgerAppendOut
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ledger_append", Arguments: fullEntry()})
		if err == nil && !res.IsError {
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &out)
		}
		done <- out
	}()
	select {
	case out := <-done:
		t.Fatalf("the append did not wait for the lock: %+v", out)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the ledger was written under someone else's lock: %v", err)
	}
	unlock()
	select {
	case out := <-done:
		if out.Entries != 1 {
			t.Errorf("append after the lock: %+v", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the append never finished after the lock was released")
	}
}

const lintLedger = `# Ledger

## Ledger — analysis — 2026-12-01T10:02:06Z

### Frozen decisions
none

### Done so far
- Read the request — evidence: specs/request.md

### Artifacts
none

### Current phase
analysis

### Next concrete step
Change the parser.

### Open tickets / misses
none

## Ledger — change — 2026-12-01T10:05:00Z

### Frozen decisions
none

### Current phase
change
`

// ledger_lint reports what baton ledger lint does: an incomplete entry at
// its line, a reset at the hard limit in the run log, a skill copying the
// ledger format; a clean ledger is clean.
func TestLedgerLint(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
	os.WriteFile(filepath.Join(dir, "specs/ledger.md"), []byte(lintLedger), 0o644)
	os.MkdirAll(filepath.Join(dir, "skills/plan"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills/plan/SKILL.md"), []byte("---\nname: plan\n---\nBefore a reset write:\n\n### Frozen decisions\n### Done so far\n### Artifacts\n"), 0o644)
	runLog := `{"time":"2026-12-01T10:02:03Z","run":"r1","type":"run_start","phases":["analysis","change"],"ledger_path":"specs/ledger.md"}
{"time":"2026-12-01T10:06:00Z","run":"r1","type":"reset","phase":"analysis","reason":"hard_limit","ledger_time":"2026-12-01T10:02:06Z","context_fraction":0.97}
`
	os.MkdirAll(filepath.Join(dir, ".baton/runs/r1"), 0o755)
	os.WriteFile(filepath.Join(dir, ".baton/runs/r1/events.jsonl"), []byte(runLog), 0o644)
	cs, _ := connectIn(t, dir)

	var out mcpserver.LedgerLintOut
	if res := call(t, cs, "ledger_lint", map[string]any{"run": "r1", "skills": []string{"skills"}}, &out); res.IsError {
		t.Fatalf("lint: %v", res.Content)
	}
	got := map[string]string{}
	for _, f := range out.Findings {
		got[f.Rule] = f.Where
	}
	want := map[string]string{
		ledger.RuleIncompleteEntry:    "specs/ledger.md:23",
		ledger.RuleHardLimitReset:     ".baton/runs/r1/events.jsonl:2",
		ledger.RuleCopiedLedgerFormat: "skills/plan/SKILL.md",
	}
	for rule, where := range want {
		if w, ok := got[rule]; !ok || !strings.HasPrefix(w, where) {
			t.Errorf("finding %s at %q, want at %s (all: %+v)", rule, w, where, out.Findings)
		}
	}
	if out.Clean || out.Entries != 2 || out.Ledger != "specs/ledger.md" {
		t.Errorf("lint: clean %v, entries %d, ledger %q", out.Clean, out.Entries, out.Ledger)
	}

	os.WriteFile(filepath.Join(dir, "clean.md"), []byte(lintLedger[:strings.Index(lintLedger, "## Ledger — change")]), 0o644)
	out = mcpserver.LedgerLintOut{}
	call(t, cs, "ledger_lint", map[string]any{"ledger": "clean.md"}, &out)
	if !out.Clean || len(out.Findings) != 0 || len(out.Problems) != 0 || out.Entries != 1 {
		t.Errorf("clean ledger: %+v", out)
	}
	wantError(t, cs, "ledger_lint", map[string]any{"run": "../../x"}, "run id")
	wantError(t, cs, "ledger_lint", map[string]any{"run": "r2"}, "r2")
	wantError(t, cs, "ledger_lint", map[string]any{"skills": []string{"../skills"}}, "escapes")
	wantError(t, cs, "ledger_lint", map[string]any{"skills": []string{"specs"}}, "no SKILL.md")
}
