package state

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHandoffReadsHandWrittenValues(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Handoff
	}{
		{"empty", "", Handoff{}},
		{"plain", "handoff:\n  next_skill: plan\n  open_decisions: [a, b]\n  context: text\n",
			Handoff{NextSkill: "plan", OpenDecisions: []string{"a", "b"}, Context: "text"}},
		{"odd types read as text", "handoff:\n  next_skill: 7\n  required_reading: one.md\n  context: {a: 1}\n",
			Handoff{NextSkill: "7", RequiredReading: []string{"one.md"}}},
		{"handoff not a mapping", "handoff: soon\n", Handoff{}},
		{"decisions", "handoff:\n  decisions:\n    - decision: d\n      evidence: e:1\n      skill: s\n      at: 2026-11-30T07:00:00Z\n    - not a mapping\n",
			Handoff{Decisions: []Decision{{Decision: "d", Evidence: "e:1", Skill: "s", At: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in), "h.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.Handoff(), cmpEmpty); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetHandoffLeavesNilFieldsAlone(t *testing.T) {
	f, err := Parse([]byte("handoff:\n  next_skill: a\n  open_decisions: [x]\n  context: keep\n"), "h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetHandoff(HandoffUpdate{NextSkill: ptr("b"), OpenDecisions: []string{}}); err != nil {
		t.Fatal(err)
	}
	want := "handoff:\n  next_skill: b\n  open_decisions: []\n  context: keep\n"
	if got := string(f.Bytes()); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRecordStepAccumulates(t *testing.T) {
	f, err := Parse([]byte("handoff:\n  next_skill: review\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		skill string
		d     time.Duration
		u     Usage
	}{
		{"plan", 1000 * time.Millisecond, Usage{InputTokens: 10, OutputTokens: 1}},
		{"plan", 2001 * time.Millisecond, Usage{InputTokens: 5, CacheReadInputTokens: 3}},
		{"review", 333 * time.Millisecond, Usage{CacheCreationInputTokens: 4}},
		{"plan", 0, Usage{}},
	}
	for _, s := range steps {
		if err := f.RecordStep("epic", s.skill, s.d, s.u); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(SkillTiming{Calls: 3, TotalSeconds: 3.001, AvgSeconds: 1, Usage: Usage{InputTokens: 15, OutputTokens: 1, CacheReadInputTokens: 3}}, f.SkillTiming("plan")); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(SkillTiming{Calls: 1, TotalSeconds: 0.333, AvgSeconds: 0.333, Usage: Usage{CacheCreationInputTokens: 4}}, f.SkillTiming("review")); diff != "" {
		t.Errorf("review (-want +got):\n%s", diff)
	}
	want := Cycle{CurrentStep: "plan", NextSkill: "review", CompletedSteps: []string{"plan", "plan", "review", "plan"}}
	if diff := cmp.Diff(want, f.Cycle("epic")); diff != "" {
		t.Errorf("cycle (-want +got):\n%s", diff)
	}
	if got := f.Handoff().LastStepCompleted; got != "plan" {
		t.Errorf("last_step_completed = %q", got)
	}
}

func TestRecordStepInvalidAndAllOrNothing(t *testing.T) {
	in := "epic_cycle:\n  completed_steps: 5\n"
	f, err := Parse([]byte(in), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flow, skill string
		d           time.Duration
	}{{"", "s", 0}, {"epic", "", 0}, {"epic", "s", -time.Second}} {
		if err := f.RecordStep(c.flow, c.skill, c.d, Usage{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("RecordStep(%q, %q, %v) err = %v, want ErrInvalid", c.flow, c.skill, c.d, err)
		}
	}
	// completed_steps is not a list, so the append fails: nothing else
	// RecordStep would have written may be left behind.
	if err := f.RecordStep("epic", "s", time.Second, Usage{}); !errors.Is(err, ErrUnsafeEdit) {
		t.Fatalf("err = %v, want ErrUnsafeEdit", err)
	}
	if string(f.Bytes()) != in {
		t.Errorf("partial write: %q", f.Bytes())
	}
}

func TestAddDecision(t *testing.T) {
	f, err := Parse(nil, "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AddDecision(Decision{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty decision: err = %v", err)
	}
	before := time.Now().Add(-time.Second)
	if err := f.AddDecision(Decision{Decision: "d", Evidence: "go test", Skill: "s"}); err != nil {
		t.Fatal(err)
	}
	ds := f.Handoff().Decisions
	if len(ds) != 1 || ds[0].At.Before(before) || ds[0].At.Location() != time.UTC {
		t.Errorf("decisions = %+v, want one stamped now in UTC", ds)
	}
}

func TestSetCycle(t *testing.T) {
	f, err := Parse([]byte("epic_cycle:\n  current_step: a # now\n  mine: 1\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetCycle("", CycleUpdate{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty flow: err = %v", err)
	}
	if err := f.SetCycle("epic", CycleUpdate{CurrentStep: ptr("b"), NextSkill: ptr("c"), CompletedSteps: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	want := "epic_cycle:\n  current_step: b # now\n  mine: 1\n  next_skill: c\n  completed_steps:\n    - a\n"
	if got := string(f.Bytes()); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
