package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// pathArgs is, for each tool that takes a path, its arguments with p in
// each path field in turn; noPaths names the tools that take none. A tool
// in neither fails TestEveryPathIsConfined, so a new tool cannot be added
// without saying which it is.
var pathArgs = map[string][]func(p string) map[string]any{
	"outline":      {func(p string) map[string]any { return map[string]any{"documents": []string{p}} }},
	"slice":        {func(p string) map[string]any { return map[string]any{"document": p} }},
	"count_tokens": {func(p string) map[string]any { return map[string]any{"files": []string{p}} }},
	"ledger_append": {func(p string) map[string]any {
		return map[string]any{"ledger": p, "phase": "read", "frozen_decisions": []string{}, "done_so_far": []any{},
			"artifacts": []string{}, "current_phase": "read", "next_step": "write", "open_tickets": []string{}}
	}},
	"ledger_latest": {func(p string) map[string]any { return map[string]any{"ledger": p} }},
	"ledger_lint": {
		func(p string) map[string]any { return map[string]any{"ledger": p} },
		func(p string) map[string]any { return map[string]any{"ledger": "doc.md", "run_log": p} },
		func(p string) map[string]any { return map[string]any{"ledger": "doc.md", "skills": []string{p}} },
	},
	"state_get": {func(p string) map[string]any { return map[string]any{"state": p} }},
	"state_set": {func(p string) map[string]any {
		return map[string]any{"state": p, "key": "handoff.next_step", "value": "x"}
	}},
	"ask": {func(p string) map[string]any {
		return map[string]any{"task": "What does Acme charge?", "documents": []string{p}, "dry_run": true}
	}},
}

var noPaths = []string{"budget_check", "skills_list", "skill_get"}

// Every path a tool takes is confined to the root: a path up and out, an
// absolute path outside, and a symlink in the root pointing out are each
// refused with one line that leaks nothing of the file, and nothing is
// written outside the root.
func TestEveryPathIsConfined(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("# Secret\n\ntop secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connectIn(t, dir)
	if err := os.Symlink(secret, filepath.Join(dir, "link.md")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	rel, err := filepath.Rel(dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		if _, ok := pathArgs[tool.Name]; !ok && !slices.Contains(noPaths, tool.Name) {
			t.Errorf("tool %s is in neither pathArgs nor noPaths: say whether it takes a path", tool.Name)
		}
	}
	for tool, variants := range pathArgs {
		for i, args := range variants {
			for _, p := range []string{filepath.ToSlash(rel), secret, "link.md"} {
				res := call(t, cs, tool, args(p), nil)
				text := resultText(res)
				if !res.IsError || text == "" || strings.Contains(text, "\n") || strings.Contains(text, "top secret") {
					t.Errorf("%s (variant %d) with %q: isError %v, text %q; want a one-line refusal", tool, i+1, p, res.IsError, text)
				}
			}
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("the folder outside the root holds %d entries after the calls, want only secret.md", len(entries))
	}
	if got, _ := os.ReadFile(secret); string(got) != "# Secret\n\ntop secret\n" {
		t.Errorf("the file outside the root was changed: %q", got)
	}
}

// No result is larger than the bound, whatever the tool: with a bound of
// MinResultBytes, each tool is called with arguments that succeed on a
// larger bound, and every result as sent (structuredContent and its text
// mirror) fits it, spilled or not.
func TestEveryResultIsBounded(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# Guide\n\n")
	for i := 0; b.Len() < 3*mcpserver.MinResultBytes; i++ {
		b.WriteString("## Part\n\nThe pumps ran all night, the valves held and the operators wrote it down.\n\n")
	}
	os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
	os.WriteFile(filepath.Join(dir, "big.md"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "specs", "state.yaml"), []byte("# state\nhandoff:\n  next_step: \""+strings.Repeat("go on ", 3000)+"\"\n"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test", MaxResultBytes: mcpserver.MinResultBytes, Getenv: func(string) string { return "" }}, nil)
	ctx := context.Background()
	long := make([]string, 400)
	for i := range long {
		long[i] = "Pricing"
	}
	calls := map[string]map[string]any{
		"outline":       {"documents": []string{"big.md"}},
		"slice":         {"document": "big.md", "sections": long},
		"count_tokens":  {"files": []string{"big.md", "big.md", "big.md"}, "texts": long},
		"budget_check":  {"context_tokens": 1000, "window": 200000},
		"ledger_append": pathArgs["ledger_append"][0]("specs/ledger.md"),
		"ledger_latest": {},
		"ledger_lint":   {},
		"state_get":     {},
		"state_set":     {"key": "handoff.current_phase", "value": strings.Repeat("long ", 3000)},
		"ask":           {"task": "What do the pumps do?", "documents": []string{"big.md"}, "dry_run": true},
		"skills_list":   {},
		"skill_get":     {"name": "lookup"},
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		args, ok := calls[tool.Name]
		if !ok {
			t.Errorf("tool %s has no call in TestEveryResultIsBounded", tool.Name)
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		if err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		wire, _ := json.Marshal(res)
		if len(wire) > mcpserver.MinResultBytes {
			t.Errorf("%s: the result is %d bytes, over the %d-byte bound", tool.Name, len(wire), mcpserver.MinResultBytes)
		}
		if res.IsError && !strings.Contains(resultText(res), mcpserver.SpillDir) {
			t.Errorf("%s failed for another reason than its size: %s", tool.Name, resultText(res))
		}
	}
}
