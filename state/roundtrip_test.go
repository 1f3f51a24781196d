package state

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func ptr(s string) *string { return &s }

// script is the full set of edits a run makes: every key baton owns.
func script(f *File) error {
	if err := f.SetHandoff(HandoffUpdate{
		NextSkill:         ptr("review"),
		LastStepCompleted: ptr("plan"),
		OpenDecisions:     []string{"which database?", "yes"},
		RequiredReading:   []string{"specs/capsule.md", "docs/odd: name.md"},
		Context:           ptr("Plan approved.\nReview next, then ship."),
	}); err != nil {
		return err
	}
	at := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	if err := f.RecordStep("epic", "plan", 1500*time.Millisecond, Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 50}); err != nil {
		return err
	}
	if err := f.AddDecision(Decision{Decision: "use flock for the lock", Evidence: "state/lock_unix.go:1", Skill: "plan", At: at}); err != nil {
		return err
	}
	if err := f.RecordStep("epic", "review", 2*time.Second, Usage{InputTokens: 800, OutputTokens: 100, CacheCreationInputTokens: 10}); err != nil {
		return err
	}
	return f.AddDecision(Decision{Decision: "ship: yes", Evidence: "go test ./...", Skill: "review", At: at})
}

var (
	scriptFlows  = []string{"epic"}
	scriptSkills = []string{"plan", "review"}
)

func TestRoundTripGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/roundtrip/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			orig, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(orig, in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Bytes(), orig) {
				t.Fatal("parsing alone changed the bytes")
			}
			if err := script(f); err != nil {
				t.Fatal(err)
			}
			got := f.Bytes()
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("result differs from %s (-want +got):\n%s", golden, diff)
			}
			assertOnlyOwnedChanged(t, orig, got, scriptFlows, scriptSkills)
			checkReadBack(t, got)
		})
	}
}

// checkReadBack proves the edited file says what the script set.
func checkReadBack(t *testing.T, data []byte) {
	t.Helper()
	f, err := Parse(data, "result")
	if err != nil {
		t.Fatalf("result does not parse: %v", err)
	}
	h := f.Handoff()
	want := Handoff{
		NextSkill:         "review",
		LastStepCompleted: "review",
		OpenDecisions:     []string{"which database?", "yes"},
		RequiredReading:   []string{"specs/capsule.md", "docs/odd: name.md"},
		Context:           "Plan approved.\nReview next, then ship.",
	}
	got := h
	got.Decisions = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handoff (-want +got):\n%s", diff)
	}
	n := len(h.Decisions)
	if n < 2 || h.Decisions[n-2].Decision != "use flock for the lock" || h.Decisions[n-1].Decision != "ship: yes" {
		t.Errorf("decisions = %+v, want the two recorded last", h.Decisions)
	}
	c := f.Cycle("epic")
	if c.CurrentStep != "review" || c.NextSkill != "review" {
		t.Errorf("cycle = %+v", c)
	}
	if k := len(c.CompletedSteps); k < 2 || c.CompletedSteps[k-2] != "plan" || c.CompletedSteps[k-1] != "review" {
		t.Errorf("completed steps = %v", c.CompletedSteps)
	}
	if st := f.SkillTiming("review"); st.Calls < 1 || st.InputTokens < 800 || st.CacheCreationInputTokens < 10 {
		t.Errorf("review timing = %+v", st)
	}
}

// assertOnlyOwnedChanged removes the lines of the keys baton owns from both
// versions; what is left must be identical, line for line, byte for byte.
func assertOnlyOwnedChanged(t *testing.T, orig, got []byte, flows, skills []string) {
	t.Helper()
	a, rewritten := userLines(t, orig, flows, skills, nil)
	b, _ := userLines(t, got, flows, skills, rewritten)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("content baton does not own changed (-orig +got):\n%s", diff)
	}
}

// userLines is data without the lines of owned keys. A leaf key owns its
// whole entry; a parent key (handoff, <flow>_cycle, metrics, skill_timings)
// owns only its own line, unless it is not a block mapping, in which case
// baton rewrites it whole (with a user's keys inside it re-rendered), so it
// is owned whole in both versions: rewritten carries that from the
// original to the result.
func userLines(t *testing.T, data []byte, flows, skills []string, rewritten map[string]bool) ([]string, map[string]bool) {
	t.Helper()
	f, err := Parse(data, "t")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	d := f.doc
	owned := map[int]bool{}
	seen := map[string]bool{}
	mark := func(whole bool, path ...string) {
		mv := lookupEntry(d, path)
		if mv == nil {
			return
		}
		if rewritten[dotted(path)] {
			whole = true
		}
		ind, err := d.keyIndent(mv)
		if err != nil {
			t.Fatal(err)
		}
		from, to := mv.Start.Position.Line, mv.Start.Position.Line
		if m, ok := unwrap(mv.Value).(*ast.MappingNode); whole || !ok || m.IsFlowStyle || len(m.Values) == 0 {
			to = d.entryEnd(mv, ind)
			seen[dotted(path)] = true
		}
		for l := from; l <= to; l++ {
			owned[l] = true
		}
	}
	mark(false, "handoff")
	for _, k := range []string{"next_skill", "last_step_completed", "open_decisions", "required_reading", "context", "decisions"} {
		mark(true, "handoff", k)
	}
	for _, fl := range flows {
		mark(false, fl+"_cycle")
		for _, k := range []string{"current_step", "next_skill", "completed_steps"} {
			mark(true, fl+"_cycle", k)
		}
	}
	mark(false, "metrics")
	mark(false, "metrics", "skill_timings")
	for _, s := range skills {
		mark(true, "metrics", "skill_timings", s)
	}
	var out []string
	for l := 1; l <= d.lines.count(); l++ {
		if !owned[l] {
			out = append(out, d.lines.text(l))
		}
	}
	return out, seen
}

func lookupEntry(d *document, path []string) *ast.MappingValueNode {
	m := d.root
	var mv *ast.MappingValueNode
	for _, k := range path {
		if m == nil || m.IsFlowStyle {
			return nil
		}
		if mv = findKey(m, k); mv == nil {
			return nil
		}
		m, _ = unwrap(mv.Value).(*ast.MappingNode)
	}
	return mv
}

// TestRandomEditsKeepUserContent applies random sequences of edits to owned
// keys, with values chosen to be awkward, and checks after every one that
// the user's lines are untouched and the value reads back.
func TestRandomEditsKeepUserContent(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/roundtrip/*.yaml")
	values := []any{
		"plain", "", "yes", "no", "1.10", "007", "null", "~", "#hash", "a: b", "- dash",
		"multi\nline", "trailing\n", " leading space", "quote ' and \"", "Zoë 🚀", "[not a list]",
		42, 3.5, true, nil, []string{}, []string{"a", "on", "x: y"}, []any{1, "two", []string{"three"}},
		map[string]any{}, map[string]any{"k": "v", "n": []int{1, 2}},
	}
	paths := [][]string{
		{"handoff", "next_skill"}, {"handoff", "context"}, {"handoff", "open_decisions"},
		{"handoff", "required_reading"}, {"handoff", "last_step_completed"}, {"handoff", "decisions"},
		{"epic_cycle", "current_step"}, {"epic_cycle", "next_skill"}, {"epic_cycle", "completed_steps"},
		{"story_cycle", "current_step"}, {"metrics", "skill_timings", "plan"}, {"metrics", "skill_timings", "qa"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, in := range inputs {
		orig, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 8; run++ {
			f, err := Parse(orig, in)
			if err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 8; step++ {
				p := paths[rng.IntN(len(paths))]
				v := values[rng.IntN(len(values))]
				if err := f.Set(v, p...); err != nil {
					t.Fatalf("%s run %d: Set(%#v, %v): %v\n%s", in, run, v, p, err, f.Bytes())
				}
				want, _ := canonical(v)
				got, ok := f.Get(p...)
				if !ok || !cmp.Equal(want, got, cmpEmpty) {
					t.Fatalf("%s: Get(%v) = %#v, want %#v", in, p, got, want)
				}
				assertOnlyOwnedChanged(t, orig, f.Bytes(), []string{"epic", "story"}, []string{"plan", "qa"})
				if t.Failed() {
					t.Fatalf("%s run %d step %d: after Set(%#v, %v):\n%s", in, run, step, v, p, f.Bytes())
				}
			}
		}
	}
}
