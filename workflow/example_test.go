package workflow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/tokens"

	golden_ "github.com/baton-dev/baton/internal/golden"
)

// TestExampleWorkflow loads the workflow that ships in examples/workflow,
// validates it against its skills, follows the chain of default next steps
// from the first phase to "done", and builds each step's fresh context. The
// golden file records the step plan with the size of every input, so a
// change to the example or to context assembly shows up in review.
func TestExampleWorkflow(t *testing.T) {
	path := filepath.Join("..", "examples", "workflow", FileName)
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Warnings) > 0 {
		t.Errorf("warnings: %q", w.Warnings)
	}
	lib, problems, err := w.Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("skill problem: %s", p)
	}
	if err := w.Validate(lib); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	budget := w.ThresholdTokens(w.WindowTokens)
	// The state file ships with comments and the team's own keys; it must
	// at least be YAML the state package can read.
	var state map[string]any
	data, err := os.ReadFile(filepath.Join(w.Dir, filepath.FromSlash(w.State)))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &state); err != nil || state["handoff"] == nil || state["owner"] == nil {
		t.Errorf("example state.yaml: %v, %v", err, state)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s: window %d, threshold %.2f (%d tokens)\n", w.Name, w.WindowTokens, w.ThresholdFraction, budget)
	phase, name := 0, w.Phases[0].Skill
	seen := map[string]bool{}
	for steps := 0; ; steps++ {
		if steps > 10 {
			t.Fatal("the example's chain does not end")
		}
		sk, ok := lib.Get(name)
		if !ok {
			t.Fatalf("no skill %q", name)
		}
		seen[sk.Name] = true
		c, err := StepContext(ws, sk, w.Capsule, w.State, "")
		if err != nil {
			t.Fatal(err)
		}
		if c.Tokens >= budget {
			t.Errorf("step %s: %d tokens, over the budget of %d", sk.Name, c.Tokens, budget)
		}
		if !strings.Contains(c.User, "<capsule path=\"capsule.md\">") || !strings.Contains(c.User, "<state path=\"specs/state.yaml\">") {
			t.Errorf("step %s: capsule or state missing from its context", sk.Name)
		}
		fmt.Fprintf(&b, "\nphase %s, skill %s: %d tokens (system %d)\n", w.Phases[phase].Name, sk.Name, c.Tokens, c.Tokens-tokensOf(c.User))
		for _, f := range c.Files {
			if f.Missing {
				fmt.Fprintf(&b, "  %-7s %-22s missing: %s\n", f.Role, f.Path, f.Problem)
			} else {
				fmt.Fprintf(&b, "  %-7s %-22s %5d tokens\n", f.Role, f.Path, f.Tokens)
			}
		}
		next, err := w.Next(phase, ChooseNext("", sk), lib)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  then: %s\n", strings.TrimSpace(next.Move.String()+" "+next.Skill))
		if next.Move == Done {
			break
		}
		phase, name = next.Phase, next.Skill
	}
	if len(seen) != 4 {
		t.Errorf("the chain ran %d distinct skills, want all 4", len(seen))
	}
	golden(t, filepath.Join("testdata", "example_plan.golden"), b.String())
}

func tokensOf(s string) int { return tokens.Count(s) }

func golden(t *testing.T, path, got string) { golden_.Check(t, path, got) }
