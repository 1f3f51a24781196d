package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// withSkillModel gives the example's analyse-request skill a model: key.
func withSkillModel(t *testing.T, dir, model string) {
	t.Helper()
	p := filepath.Join(dir, "skills", "analyse-request", "SKILL.md")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "name: analyse-request\n", "name: analyse-request\nmodel: "+model+"\n", 1)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// modelsBySkill maps each request's skill (by its system prompt) to the
// models it was sent with.
func modelsBySkill(reqs []llmtest.RecordedRequest) map[string][]string {
	out := map[string][]string{}
	for _, r := range reqs {
		who := "other"
		switch {
		case strings.Contains(r.System, "You are a sub-agent"):
			who = "sub-agent"
		case strings.Contains(r.System, "# Analyse the request"):
			who = "analyse-request"
		}
		out[who] = append(out[who], r.Model)
	}
	return out
}

func allAre(models []string, want string) bool {
	for _, m := range models {
		if m != want {
			return false
		}
	}
	return len(models) > 0
}

// A skill's model: selects the model of its steps and of the sub-agents
// they dispatch; other skills keep the run's model. --model given
// explicitly wins.
func TestSkillModelSelectsTheStepModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tt := range []struct {
		name     string
		explicit bool
		want     string
	}{
		{"from the skill", false, "claude-haiku-4-5"},
		{"--model wins", true, "claude-sonnet-4-5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyExample(t)
			withSkillModel(t, dir, "haiku")
			s := llmtest.NewServer(t, script(true))
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s),
				ModelName: "claude-sonnet-4-5", Provider: "anthropic", ModelExplicit: tt.explicit})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := modelsBySkill(s.Requests())
			if !allAre(got["analyse-request"], tt.want) || !allAre(got["sub-agent"], tt.want) {
				t.Errorf("analyse-request sent %v, its sub-agents %v; want all %s", got["analyse-request"], got["sub-agent"], tt.want)
			}
			if !allAre(got["other"], "claude-sonnet-4-5") {
				t.Errorf("other skills sent %v, want the run's model", got["other"])
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "model") {
					t.Errorf("unexpected warning %q", w)
				}
			}
		})
	}
}

// A model the provider cannot serve is a warning in the run's result, and
// the step runs on the run's model.
func TestSkillModelNotHonouredWarns(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := copyExample(t)
	withSkillModel(t, dir, "opus")
	s := llmtest.NewServer(t, script(true))
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s),
		ModelName: "gpt-4o", Provider: "openai"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := modelsBySkill(s.Requests()); !allAre(got["analyse-request"], "gpt-4o") {
		t.Errorf("analyse-request sent %v, want the run's gpt-4o", got["analyse-request"])
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, `"opus"`) && strings.Contains(w, "gpt-4o") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one warning about opus, got %d in %q", n, res.Warnings)
	}
}

// The budget's window is the step model's: with the run on a 128k model the
// analysis step's 150k-token context forces a reset; with the skill on a
// model of a million tokens it does not. window_tokens, when set, still wins.
func TestSkillModelSetsTheBudgetWindow(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tt := range []struct {
		name, model  string
		keepWindow   bool
		resetsWanted bool
	}{
		{"run model's window", "", false, true},
		{"skill model's window", "gpt-4.1", false, false},
		{"window_tokens wins", "gpt-4.1", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyExample(t)
			if tt.model != "" {
				withSkillModel(t, dir, tt.model)
			}
			if !tt.keepWindow {
				p := filepath.Join(dir, "baton.yaml")
				data, _ := os.ReadFile(p)
				if err := os.WriteFile(p, []byte(strings.Replace(string(data), "window_tokens: 200000\n", "", 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := llmtest.NewServer(t, script(true))
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s),
				ModelName: "gpt-4o", Provider: "openai"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := res.Resets > 0; got != tt.resetsWanted {
				t.Errorf("resets = %d, want resets: %v", res.Resets, tt.resetsWanted)
			}
		})
	}
}

// An external agent brings its own model: a skill's model: key cannot reach
// it, and the run says so once.
func TestSkillModelWithAgentCmdWarns(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, logDir := copyExample(t), t.TempDir()
	withSkillModel(t, dir, "haiku")
	var log strings.Builder
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: fakeAgentCmd(logDir), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "analyse-request") && strings.Contains(w, `"haiku"`) && strings.Contains(w, "external agent") {
			n++
		}
	}
	if n != 1 || !strings.Contains(log.String(), "warning: skill analyse-request asks for model \"haiku\"") {
		t.Errorf("want one warning about the agent command, got %d in %q; log:\n%s", n, res.Warnings, log.String())
	}
}
