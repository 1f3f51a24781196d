package mcpserver_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/internal/writepolicy"
	"github.com/baton-dev/baton/mcpserver"
)

// secretMark is in every file a tool may not read; no result may hold it.
const secretMark = "tok3n-SECRET"

// policyRoot is a project with every denied family in it, and symlinks
// inside the root to its files and folders.
func policyRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".git/config":              "[remote \"origin\"]\n\turl = https://" + secretMark + "@example.com/r.git\n",
		".git/notes.md":            "# Notes\n\n" + secretMark + "\n",
		".git/hooks/README":        "hooks\n",
		".baton/current.json":      "{}\n",
		"baton.yaml":               "name: w\ncapsule: capsule.md\nagent_cmd: claude -p\nphases:\n  - name: a\n    skill: review\n",
		"skills/review/SKILL.md":   "---\nname: review\ndescription: reviews\n---\nReview.\n",
		".claude/settings.json":    "{}\n",
		".github/workflows/ci.yml": "on: push\n",
		".env":                     "TOKEN=" + secretMark + "\n",
		"doc.md":                   "# Doc\n\nText.\n",
		"specs/state.yaml":         "handoff:\n  next_step: go\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link-git.md":           ".git/config",
		"link-notes.md":         ".git/notes.md",
		"gitdir":                ".git",
		"link-claude.md":        ".claude/settings.json",
		"claudedir":             ".claude",
		"linkskill":             "skills/review",
		"wf-state.yaml":         "baton.yaml",
		"ci-state.yml":          ".github/workflows/ci.yml",
		"link-env.md":           ".env",
		"specs/up":              "..",
		"link-baton-state.yaml": ".baton/state.yaml",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("SKIPPED: no symlinks here: %v", err)
		}
	}
	return dir
}

// tree is every entry under root with its bytes (a symlink by its
// target), to compare before and after.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			data, _ := os.ReadFile(p)
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The same rules hold on every system (package writepolicy), so the
// Windows spellings (case, trailing dots, streams, 8.3 short names) and
// the macOS ones (case, ignorable code points, the Kelvin sign) are in the
// tables beside the plain ones, and all are refused here too.
var (
	ledgerTargets = []string{
		".git/config", ".git/ledger.md", ".GIT/ledger.md", ".g\u200cit/ledger.md", "git~1/ledger.md", ".git./ledger.md",
		".git::$INDEX_ALLOCATION/ledger.md", "./.git//ledger.md", "gitdir/ledger.md", "link-git.md", "link-notes.md",
		"specs/up/.git/ledger.md", ".baton/ledger.md", ".BATON/ledger.md", "SKILL.md", "S\u212aILL.md",
		"skills/review/SKILL.md", "skills/review/notes.md", "linkskill/notes.md", "CLAUDE.md", "AGENTS.md",
		".claude/ledger.md", "claudedir/ledger.md", "link-claude.md", ".cursor/ledger.md", ".vscode/ledger.md",
		".codex/ledger.md", ".github/ledger.md", ".husky/ledger.md", ".githooks/ledger.md", ".circleci/ledger.md",
		".gitlab/ledger.md", "link-env.md", "baton.yaml",
	}
	stateTargets = []string{
		"baton.yaml", "Baton.YAML", "baton.yaml.", "baton.yaml::$DATA", "BATON~1.YAM", "wf-state.yaml",
		".baton/state.yaml", "link-baton-state.yaml", ".git/state.yaml", "gitdir/state.yaml", ".github/workflows/state.yml",
		"ci-state.yml", ".claude/state.yaml", "claudedir/state.yaml", "skills/review/state.yaml", "linkskill/state.yaml",
		".pre-commit-config.yaml", ".gitlab-ci.yml", "lefthook.yml", "docker-compose.yml", "mkdocs.yml", "specs/state.md",
	}
	readTargets = []string{
		".git/config", ".GIT/config", ".Git/CONFIG", ".g\u200cit/config", "git~1/config", ".git./config", "./.git//config",
		".git/notes.md", "gitdir/notes.md", "gitdir/config", "link-git.md", "link-notes.md", "specs/up/.git/notes.md",
		".env", ".ENV", "link-env.md", ".git", "gitdir",
	}
)

// Every MCP tool, with every path argument it takes, refuses each
// dangerous target with one line that names no secret, and nothing under
// the root changes: not a byte, not a new folder.
func TestEveryToolRefusesDeniedPaths(t *testing.T) {
	dir := policyRoot(t)
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test", Getenv: func(string) string { return "" }}, nil)
	before := tree(t, dir)
	writes := map[string][]string{"ledger_append": ledgerTargets, "state_set": stateTargets}
	for tool, variants := range pathArgs {
		for i, args := range variants {
			targets := readTargets
			if w, ok := writes[tool]; ok {
				targets = w
			}
			for _, p := range targets {
				a := args(p)
				if tool == "state_set" {
					a["key"], a["value"] = "agent_cmd", "touch PWNED; claude -p"
				}
				res := call(t, cs, tool, a, nil)
				text := resultText(res)
				if !res.IsError || text == "" || strings.Contains(text, "\n") || strings.Contains(text, secretMark) {
					t.Errorf("%s (argument %d) with %q: isError %v, text %q; want a one-line refusal", tool, i+1, p, res.IsError, text)
				}
			}
		}
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("the root changed (-before +after):\n%s", diff)
	}
}

// The refusal of each denied family comes from the write policy, not from
// a missing file or a wrong extension: the error says so.
func TestRefusalsNameThePolicy(t *testing.T) {
	dir := policyRoot(t)
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	for _, c := range []struct{ tool, path string }{
		{"ledger_append", ".git/ledger.md"}, {"ledger_append", "link-git.md"}, {"ledger_append", "gitdir/ledger.md"},
		{"ledger_append", ".baton/ledger.md"}, {"ledger_append", "skills/review/notes.md"}, {"ledger_append", "CLAUDE.md"},
		{"ledger_append", "link-claude.md"}, {"ledger_append", ".github/ledger.md"}, {"ledger_append", "link-env.md"},
		{"state_set", "baton.yaml"}, {"state_set", "wf-state.yaml"}, {"state_set", "ci-state.yml"},
		{"state_set", ".claude/state.yaml"}, {"state_set", "linkskill/state.yaml"},
		{"slice", ".git/notes.md"}, {"slice", "link-notes.md"}, {"outline", "gitdir/notes.md"},
		{"count_tokens", ".git/config"}, {"count_tokens", ".env"}, {"ask", "link-notes.md"}, {"state_get", ".git/state.yaml"},
	} {
		args := pathArgs[c.tool][0](c.path)
		if c.tool == "state_set" {
			args["key"] = "agent_cmd"
		}
		res := call(t, cs, c.tool, args, nil)
		if text := resultText(res); !res.IsError || !strings.Contains(text, writepolicy.ErrDenied.Error()) {
			t.Errorf("%s %q: isError %v, %q; want the write policy's refusal", c.tool, c.path, res.IsError, text)
		}
	}
}

// What the policy allows still works: a declared ledger and state file
// anywhere outside the denied places, and documents, .baton's run logs and
// host configuration read.
func TestPolicyAllowsTheWorkspace(t *testing.T) {
	dir := policyRoot(t)
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test",
		Ledgers: []string{"specs/ledger.md", "notes/ledger.md"}, States: []string{"specs/state.yaml", "work/run-state.yml"}}, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ledger_append", pathArgs["ledger_append"][0]("specs/ledger.md")},
		{"ledger_append", pathArgs["ledger_append"][0]("notes/ledger.md")},
		{"state_set", map[string]any{"key": "handoff.next_step", "value": "review"}},
		{"state_set", map[string]any{"state": "work/run-state.yml", "key": "a", "value": 1}},
		{"slice", map[string]any{"document": "doc.md"}},
		{"count_tokens", map[string]any{"files": []string{".claude/settings.json", "baton.yaml", "skills/review/SKILL.md"}}},
		{"state_get", map[string]any{"state": "baton.yaml", "key": "agent_cmd"}},
	} {
		if res := call(t, cs, c.tool, c.args, nil); res.IsError {
			t.Errorf("%s %v: %s", c.tool, c.args, resultText(res))
		}
	}
}

// A declared state file whose content is a workflow (phases or agent_cmd
// at the top) is not edited: baton run would execute it.
func TestStateSetRefusesAWorkflowByContent(t *testing.T) {
	dir := t.TempDir()
	wf := "name: w\ncapsule: c.md\nagent_cmd: claude -p\nphases:\n  - name: a\n    skill: s\n"
	if err := os.WriteFile(filepath.Join(dir, "state.yaml"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test", States: []string{"state.yaml"}}, nil)
	res := call(t, cs, "state_set", map[string]any{"state": "state.yaml", "key": "agent_cmd", "value": "touch PWNED"}, nil)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "workflow") {
		t.Errorf("state_set on a workflow named state.yaml: isError %v, %q", res.IsError, text)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "state.yaml")); string(got) != wf {
		t.Errorf("the workflow changed:\n%s", got)
	}
}

// The state: the root's baton.yaml names is a state file whatever its
// name; another YAML file of the same kind of name is not.
func TestStateSetTakesTheWorkflowsStatePath(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "baton.yaml"), []byte("name: w\ncapsule: c.md\nstate: work/cockpit.yaml\nphases:\n  - name: a\n    skill: lookup\n"), 0o644)
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	if res := call(t, cs, "state_set", map[string]any{"state": "work/cockpit.yaml", "key": "handoff.next_step", "value": "go"}, nil); res.IsError {
		t.Errorf("the workflow's state file: %s", resultText(res))
	}
	res := call(t, cs, "state_set", map[string]any{"state": "work/other.yaml", "key": "a", "value": 1}, nil)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "not a state file this server may write (allowed: work/cockpit.yaml)") {
		t.Errorf("work/other.yaml: isError %v, %q", res.IsError, text)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "other.yaml")); err == nil {
		t.Error("a refused state_set created its file")
	}
}
