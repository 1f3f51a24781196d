package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With --agent-cmd no provider is configured or needed: a shell one-liner
// plays the agent and ends the run through its handoff block.
func TestRunWithAgentCmd(t *testing.T) {
	isolateEnv(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	agent := `cat > '` + logDir + `'/"$BATON_STEP-$BATON_SKILL.txt"; printf 'prose\n` + "```" + `handoff\nnext_skill: done\nsummary: finished by the external agent\n` + "```" + `\n'`
	code, out, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(ws, "baton.yaml"), "--agent-cmd", agent)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	if strings.TrimSpace(out) != "finished by the external agent" {
		t.Errorf("stdout %q", out)
	}
	in, err := os.ReadFile(filepath.Join(logDir, "1-analyse-request.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(in), "# Analyse the request") {
		t.Errorf("the agent's stdin lacks the skill body:\n%.200s", in)
	}
}

func TestRunWithFailingAgentCmd(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"failing agent", []string{"--agent-cmd", "echo 'agent: no credit left' >&2; exit 3"}, 1, "step 1 (analyse-request): agent command failed (exit status 3): agent: no credit left (resume with"},
		{"bad timeout", []string{"--agent-cmd", "true", "--agent-timeout", "0s"}, 2, "--agent-timeout must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runBaton(t, "", append([]string{"run", "--fresh", "--workflow", filepath.Join(ws, "baton.yaml")}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != tc.code || !strings.Contains(lines[len(lines)-1], tc.want) {
				t.Errorf("exit %d, last stderr line %q; want exit %d and %q", code, lines[len(lines)-1], tc.code, tc.want)
			}
		})
	}
}
