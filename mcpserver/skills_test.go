package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/skill"
)

const customSkill = `---
name: contract-review
description: Review a contract clause for obligations and risks.
license: MIT
metadata:
  owner: legal
---

# Contract review

You read one clause and list who must do what, by when.
`

// skillsDir writes one custom skill folder and returns the folder holding it.
func skillsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "contract-review"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "contract-review", "SKILL.md"), []byte(customSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// skills_list holds every built-in and the --skills folder's skill, and
// query narrows it.
func TestSkillsListHoldsBuiltinsAndCustom(t *testing.T) {
	dir := skillsDir(t)
	cs, _, _ := connectAsk(t, mcpserver.Config{Skills: []string{dir}, Getenv: env(nil)})
	var out mcpserver.SkillsListOut
	call(t, cs, "skills_list", map[string]any{}, &out)
	got := map[string]mcpserver.SkillInfo{}
	for _, s := range out.Skills {
		got[s.Name] = s
	}
	for _, b := range skill.Builtins().List() {
		if s, ok := got[b.Name]; !ok || s.Source != "built-in" || s.Description != b.Description {
			t.Errorf("built-in %q: listed as %+v", b.Name, s)
		}
	}
	if s := got["contract-review"]; !strings.HasSuffix(s.Source, filepath.Join("contract-review", "SKILL.md")) {
		t.Errorf("custom skill listed as %+v", s)
	}
	if len(out.Skills) != len(skill.Builtins().List())+1 {
		t.Errorf("%d skills listed", len(out.Skills))
	}

	var some mcpserver.SkillsListOut
	call(t, cs, "skills_list", map[string]any{"query": "CONTRACT clause"}, &some)
	if len(some.Skills) != 1 || some.Skills[0].Name != "contract-review" {
		t.Errorf("query: %+v", some.Skills)
	}
}

// skill_get matches names loosely, as plans write them; an unknown name
// is a one-line error naming the nearest skill.
func TestSkillGet(t *testing.T) {
	cs, _, _ := connectAsk(t, mcpserver.Config{Skills: []string{skillsDir(t)}, Getenv: env(nil)})
	want, _ := skill.Builtins().Get("fact-extraction")
	var out mcpserver.SkillGetOut
	call(t, cs, "skill_get", map[string]any{"name": "Fact_Extraction"}, &out)
	if out.Name != "fact-extraction" || out.Body != want.Body || out.Source != "built-in" || out.Metadata[skill.OutputHintKey] == "" {
		t.Errorf("skill_get fact-extraction: %+v", out)
	}
	var custom mcpserver.SkillGetOut
	call(t, cs, "skill_get", map[string]any{"name": "contract-review"}, &custom)
	if custom.License != "MIT" || custom.Metadata["owner"] != "legal" || !strings.Contains(custom.Body, "who must do what") {
		t.Errorf("skill_get contract-review: %+v", custom)
	}

	for _, tc := range []struct{ name, want string }{
		{"fact-extractoin", "did you mean fact-extraction"},
		{"summary", "did you mean summarization"},
		{"zzzz", "available: "},
		{"", "no skill name"},
	} {
		res := call(t, cs, "skill_get", map[string]any{"name": tc.name}, nil)
		msg := resultText(res)
		if !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
			t.Errorf("skill_get %q: isError %v, %q: want one line with %q", tc.name, res.IsError, msg, tc.want)
		}
	}
}

// Every skill is a prompt with an optional task argument; getting one
// returns the skill's body as a user message, the task after it.
func TestSkillPrompts(t *testing.T) {
	cs, _, _ := connectAsk(t, mcpserver.Config{Skills: []string{skillsDir(t)}, Getenv: env(nil)})
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Prompt{}
	for _, p := range list.Prompts {
		got[p.Name] = p
	}
	names := append(skill.Builtins().Names(), "contract-review")
	for _, name := range names {
		p, ok := got[name]
		if !ok {
			t.Errorf("no prompt %q", name)
			continue
		}
		if p.Description == "" || len(p.Arguments) != 1 || p.Arguments[0].Name != "task" || p.Arguments[0].Required {
			t.Errorf("prompt %q: description %q, arguments %+v", name, p.Description, p.Arguments)
		}
	}
	if len(list.Prompts) != len(names) {
		t.Errorf("%d prompts, want %d", len(list.Prompts), len(names))
	}

	want, _ := skill.Builtins().Get("causal-reasoning")
	for _, tc := range []struct {
		args map[string]string
		want string
	}{
		{nil, want.Body},
		{map[string]string{"task": "Why did the pool run out?"}, want.Body + "\n\nTask: Why did the pool run out?"},
	} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "causal-reasoning", Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Description != want.Description {
			t.Fatalf("prompt: %+v", res)
		}
		if text, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || text.Text != tc.want {
			t.Errorf("prompt with %v: %+v", tc.args, res.Messages[0].Content)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no-such-skill"}); err == nil {
		t.Error("an unknown prompt was served")
	}
}

// An invalid custom skill refuses the server in one line.
func TestInvalidSkillsFolderRefusesTheServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", "SKILL.md"), []byte("---\nname: Bad Name!\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := mcpserver.New(mcpserver.Config{Root: t.TempDir(), Skills: []string{dir}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--skills "+dir) {
		t.Errorf("New with an invalid skill: %v", err)
	}
	_, err = mcpserver.New(mcpserver.Config{Root: t.TempDir(), Skills: []string{filepath.Join(dir, "missing")}})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("New with a missing skills folder: %v", err)
	}
}
