package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/skill"
)

// mcpContractTools is every tool the MCP contract (issue 10) names. A
// tool here that tools/list does not return fails TestMCPInspector as
// missing, so a tool that is dropped or renamed cannot go unnoticed; the
// host skill may name only these.
var mcpContractTools = []string{
	"outline", "slice", "count_tokens",
	"budget_check",
	"ledger_append", "ledger_latest", "ledger_lint",
	"state_get", "state_set",
	"ask",
	"skills_list", "skill_get",
}

const hostSection = "## Use baton inside Claude Code, Codex or Cursor"

// fencedBlock is one fenced code block of docs/hosts.md and the line before
// it, which names the file the block shows.
type fencedBlock struct {
	lang, before, body string
}

// hostSetupBlocks returns the fenced blocks of the host setup
// section.
func hostSetupBlocks(t *testing.T) []fencedBlock {
	t.Helper()
	data, err := os.ReadFile("../../docs/hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n"+hostSection+"\n")
	if !ok {
		t.Fatalf("docs/hosts.md has no %q section", hostSection)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var blocks []fencedBlock
	lines := strings.SplitAfter(sec, "\n")
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(strings.TrimSuffix(lines[i], "\n"), "```")
		if !ok {
			continue
		}
		b := fencedBlock{lang: lang}
		for j := i - 1; j >= 0; j-- {
			if s := strings.TrimSpace(lines[j]); s != "" {
				b.before = s
				break
			}
		}
		var body strings.Builder
		for i++; i < len(lines) && strings.TrimSuffix(lines[i], "\n") != "```"; i++ {
			body.WriteString(lines[i])
		}
		b.body = body.String()
		blocks = append(blocks, b)
	}
	return blocks
}

// The host setup blocks of docs/hosts.md are the files in examples/host, byte for
// byte: each json or toml block's preceding line names its file, and every
// host file is shown. The Inspector test runs .mcp.json, so what a reader
// copies is what was tested.
func TestReadmeHostSetupMatchesExamples(t *testing.T) {
	named := regexp.MustCompile("`(examples/host/[^`]+)`")
	want := []string{"examples/host/.mcp.json", "examples/host/codex-config.toml", "examples/host/.cursor/mcp.json"}
	var shown []string
	var claudeLine string
	for _, b := range hostSetupBlocks(t) {
		if b.lang == "sh" {
			claudeLine = strings.TrimSpace(b.body)
			continue
		}
		m := named.FindAllStringSubmatch(b.before, -1)
		if m == nil {
			t.Errorf("the line before a %s block names no examples/host file: %q", b.lang, b.before)
			continue
		}
		name := m[len(m)-1][1]
		shown = append(shown, name)
		data, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Errorf("docs/hosts.md shows %s: %v", name, err)
			continue
		}
		if string(data) != b.body {
			t.Errorf("docs/hosts.md's block for %s differs from the file:\ndocs/hosts.md:\n%s\nfile:\n%s", name, b.body, data)
		}
	}
	for _, name := range want {
		if !slices.Contains(shown, name) {
			t.Errorf("docs/hosts.md does not show %s", name)
		}
	}

	// The three files and the claude command start the same server.
	if claudeLine != "claude mcp add --scope project baton -- baton mcp" {
		t.Errorf("docs/hosts.md's claude command is %q", claudeLine)
	}
	for _, name := range []string{".mcp.json", ".cursor/mcp.json"} {
		var f struct {
			MCPServers map[string]struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		data, err := os.ReadFile(filepath.Join("../../examples/host", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		s, ok := f.MCPServers["baton"]
		if !ok || s.Type != "stdio" || s.Command != "baton" || len(s.Args) == 0 || s.Args[0] != "mcp" {
			t.Errorf("%s: mcpServers.baton = %+v, want a stdio server running baton mcp", name, s)
		}
	}
	toml, err := os.ReadFile("../../examples/host/codex-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"[mcp_servers.baton]", `command = "baton"`, `args = ["mcp"]`} {
		if !slices.Contains(strings.Split(string(toml), "\n"), line) {
			t.Errorf("codex-config.toml has no line %s", line)
		}
	}
}

// The host skill loads without a problem and names only tools the
// contract has, so a renamed tool cannot leave it pointing at nothing.
func TestHostSkill(t *testing.T) {
	s, problems, err := skill.LoadDir("../../examples/host/skills/baton-context")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("problem: %s", p)
	}
	if s.Name != "baton-context" {
		t.Errorf("name = %q", s.Name)
	}
	var named []string
	for _, m := range regexp.MustCompile("`([a-z]+(?:_[a-z]+)*)`").FindAllStringSubmatch(s.Body, -1) {
		if strings.Contains(m[1], "_") || slices.Contains([]string{"outline", "slice", "ask"}, m[1]) {
			named = append(named, m[1])
		}
	}
	// Fields and values of the tools' inputs and results the skill cites.
	notTools := []string{"at_boundary", "next_phase_tokens", "next_step", "reset_at_next_safe_point", "reset_now"}
	for _, name := range named {
		if !slices.Contains(mcpContractTools, name) && !slices.Contains(notTools, name) {
			t.Errorf("the skill names %q, which is not a tool in the contract", name)
		}
	}
	for _, tool := range []string{"budget_check", "ledger_append", "ledger_latest", "slice"} {
		if !slices.Contains(named, tool) {
			t.Errorf("the skill does not name %s", tool)
		}
	}
}
