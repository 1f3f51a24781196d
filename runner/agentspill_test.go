package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/runner"
)

// An external agent that writes more than 4 MiB to stdout does not fail
// the step: its whole output is spilled (byte for byte), the step keeps the
// head and the end, and the handoff block at the end still applies.
func TestAgentCmdOversizeOutputIsSpilledNotLost(t *testing.T) {
	dir := copyExample(t)
	const line = "a line of the agent's long output, kept whole"
	const lines = 120000
	handoff := "```handoff\nnext_skill: done\nsummary: the big output was handled\n```\n"
	script := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(script, []byte("cat > /dev/null\nyes \""+line+"\" | head -n 120000\nprintf '```handoff\\nnext_skill: done\\nsummary: the big output was handled\\n```\\n'\n"), 0o755)
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: "sh " + script})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != "the big output was handled" || res.Steps != 1 {
		t.Errorf("summary %q after %d steps; want the handoff's summary after one step", res.Summary, res.Steps)
	}
	want := strings.Repeat(line+"\n", lines) + handoff
	files := spillFiles(t, dir, res.RunID)
	if len(files) != 1 {
		t.Fatalf("%d spill files, want 1", len(files))
	}
	for name, b := range files {
		if !strings.Contains(name, "agent-output") || string(b) != want {
			t.Errorf("%s holds %d bytes, want the agent's %d, byte for byte", name, len(b), len(want))
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "kept whole in .baton/runs/"+res.RunID+"/spill/") {
		t.Errorf("no warning naming the spill file: %v", res.Warnings)
	}
}
