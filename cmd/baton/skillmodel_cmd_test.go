package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// baton run honours a skill's model: key unless --model is given on the
// command line; the provider's default model does not count as a choice.
func TestRunSkillModelAndExplicitModelFlag(t *testing.T) {
	isolateEnv(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := exampleWorkspace(t)
	p := filepath.Join(dir, "skills", "analyse-request", "SKILL.md")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "name: analyse-request\n", "name: analyse-request\nmodel: haiku\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.NewServer(t, finishing())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	wf := filepath.Join(dir, "baton.yaml")
	models := func(from int) (analyse, other []string) {
		for _, r := range s.Requests()[from:] {
			if strings.Contains(r.System, "# Analyse the request") {
				analyse = append(analyse, r.Model)
			} else {
				other = append(other, r.Model)
			}
		}
		return analyse, other
	}

	if code, _, errOut := runBaton(t, "", "run", "--workflow", wf); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	analyse, other := models(0)
	if len(analyse) == 0 || analyse[0] != "claude-haiku-4-5" || len(other) == 0 || other[0] != "claude-sonnet-4-5" {
		t.Errorf("without --model: analyse-request sent %v, the others %v; want claude-haiku-4-5 and the default", analyse, other)
	}

	n := len(s.Requests())
	if code, _, errOut := runBaton(t, "", "run", "--fresh", "--model", "claude-opus-4-5", "--workflow", wf); code != exitOK {
		t.Fatalf("run --model: exit %d: %s", code, errOut)
	}
	analyse, other = models(n)
	if len(analyse) == 0 || analyse[0] != "claude-opus-4-5" || len(other) == 0 || other[0] != "claude-opus-4-5" {
		t.Errorf("with --model: analyse-request sent %v, the others %v; want claude-opus-4-5 throughout", analyse, other)
	}
}

func TestSkillsShowPrintsModel(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "quick-look", "---\nname: quick-look\ndescription: Look quickly.\nmodel: haiku\n---\nLook.\n")
	code, out, errOut := runBaton(t, "", "skills", "show", "quick-look", "--skills", dir)
	if code != exitOK || !strings.Contains(out, "model:         haiku\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a model: line", code, out, errOut)
	}
}
