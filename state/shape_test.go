package state

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Real skill suites keep completed_steps as one comma-separated string and
// last_step_completed as a multi-line summary. Recording a step keeps each
// in the shape the file has, and leaves every other line as it was.
func TestRecordKeepsTheShapesOfTheFile(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		rec       StepRecord
		want      string // the file after, whole
		wantSteps []string
	}{
		{
			name:      "comma-separated string grows as one string, quotes kept",
			in:        "suite_cycle:\n  completed_steps: \"frame, survey\"   # kept by the agent\nowner: me\n",
			rec:       StepRecord{Flow: "suite", Skill: "design"},
			want:      "suite_cycle:\n  completed_steps: \"frame, survey, design\"   # kept by the agent\n  current_step: design\nowner: me\nhandoff:\n  last_step_completed: design\n",
			wantSteps: []string{"frame", "survey", "design"},
		},
		{
			name:      "plain string without spaces after its commas",
			in:        "suite_cycle:\n  completed_steps: frame,survey\n",
			rec:       StepRecord{Flow: "suite", Skill: "design"},
			want:      "suite_cycle:\n  completed_steps: frame,survey,design\n  current_step: design\nhandoff:\n  last_step_completed: design\n",
			wantSteps: []string{"frame", "survey", "design"},
		},
		{
			name:      "empty string starts a string",
			in:        "suite_cycle:\n  completed_steps: ''\n",
			rec:       StepRecord{Flow: "suite", Skill: "frame"},
			want:      "suite_cycle:\n  completed_steps: 'frame'\n  current_step: frame\nhandoff:\n  last_step_completed: frame\n",
			wantSteps: []string{"frame"},
		},
		{
			name:      "a list stays a list",
			in:        "suite_cycle:\n  completed_steps:\n    - frame\n",
			rec:       StepRecord{Flow: "suite", Skill: "survey"},
			want:      "suite_cycle:\n  completed_steps:\n    - frame\n    - survey\n  current_step: survey\nhandoff:\n  last_step_completed: survey\n",
			wantSteps: []string{"frame", "survey"},
		},
		{
			name:      "a step that listed itself is not listed twice",
			in:        "suite_cycle:\n  completed_steps: \"frame, survey\"\n",
			rec:       StepRecord{Flow: "suite", Skill: "survey", Listed: true},
			want:      "suite_cycle:\n  completed_steps: \"frame, survey\"\n  current_step: survey\nhandoff:\n  last_step_completed: survey\n",
			wantSteps: []string{"frame", "survey"},
		},
		{
			name: "a multi-line summary is replaced by the step's summary, in the same style",
			in:   "handoff:\n  last_step_completed: |\n    Nothing yet.\n    The suite has not run.\n  team: ours\n",
			rec:  StepRecord{Flow: "suite", Skill: "frame", Summary: "Framed the problem.\nTwo questions are open."},
			want: "handoff:\n  last_step_completed: |\n    frame: Framed the problem.\n    Two questions are open.\n  team: ours\n" +
				"suite_cycle:\n  completed_steps:\n    - frame\n  current_step: frame\n",
			wantSteps: []string{"frame"},
		},
		{
			name: "strip chomping is kept",
			in:   "handoff:\n  last_step_completed: |-\n    one\n    two\n",
			rec:  StepRecord{Flow: "s", Skill: "frame", Summary: "did it\n\n"},
			want: "handoff:\n  last_step_completed: |-\n    frame: did it\n" +
				"s_cycle:\n  completed_steps:\n    - frame\n  current_step: frame\n",
			wantSteps: []string{"frame"},
		},
		{
			name: "a one-line value still gets the skill's name",
			in:   "handoff:\n  last_step_completed: survey\n",
			rec:  StepRecord{Flow: "s", Skill: "frame", Summary: "a summary\nof two lines"},
			want: "handoff:\n  last_step_completed: frame\n" +
				"s_cycle:\n  completed_steps:\n    - frame\n  current_step: frame\n",
			wantSteps: []string{"frame"},
		},
		{
			name: "a summary the step wrote itself is kept",
			in:   "handoff:\n  last_step_completed: |\n    frame: written by the agent\n",
			rec:  StepRecord{Flow: "s", Skill: "frame", Summary: "from the block", KeepLastStep: true},
			want: "handoff:\n  last_step_completed: |\n    frame: written by the agent\n" +
				"s_cycle:\n  completed_steps:\n    - frame\n  current_step: frame\n",
			wantSteps: []string{"frame"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Record(tt.rec); err != nil {
				t.Fatalf("Record: %v", err)
			}
			got := string(f.Bytes())
			// The timings are checked elsewhere; here only what precedes them.
			got, _, _ = strings.Cut(got, "metrics:\n")
			if got != tt.want {
				t.Errorf("file after:\n%s\nwant:\n%s", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantSteps, f.Cycle(tt.rec.Flow).CompletedSteps); diff != "" {
				t.Errorf("completed steps (-want +got):\n%s", diff)
			}
		})
	}
}

// A value of a shape no step list can take is refused with a line that
// says what the file holds and what would work, and nothing changes.
func TestRecordRefusesACompletedStepsMapping(t *testing.T) {
	in := "x_cycle:\n  completed_steps: {a: 1}\n"
	f, err := Parse([]byte(in), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = f.Record(StepRecord{Flow: "x", Skill: "a", Elapsed: time.Second})
	if err == nil || !strings.Contains(err.Error(), "x_cycle.completed_steps") || !strings.Contains(err.Error(), "a list or a comma-separated string") {
		t.Fatalf("err = %v", err)
	}
	if string(f.Bytes()) != in {
		t.Errorf("the file changed: %q", f.Bytes())
	}
}

func TestCycleReadsACommaSeparatedString(t *testing.T) {
	f, err := Parse([]byte("e_cycle:\n  completed_steps: \" a, b ,,c \"\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, f.Cycle("e").CompletedSteps); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChanged(t *testing.T) {
	before, _ := Parse([]byte("handoff:\n  next_skill: a   # a comment\n  open_decisions: [x]\n"), "b.yaml")
	after, _ := Parse([]byte("handoff:\n  next_skill: a\n  open_decisions:\n    - x\n    - y\n"), "a.yaml")
	if after.Changed(before, "handoff", "next_skill") {
		t.Error("next_skill reads the same, yet reported changed")
	}
	if !after.Changed(before, "handoff", "open_decisions") {
		t.Error("open_decisions gained an item, yet reported unchanged")
	}
	if !after.Changed(nil, "handoff", "next_skill") {
		t.Error("a value compared with no file at all must count as changed")
	}
	if after.Changed(before, "handoff", "context") {
		t.Error("a key missing from both is unchanged")
	}
}

// A summary is written exactly or not at all: one the file cannot hold
// exactly falls back to the skill's name rather than failing the step's
// bookkeeping, and a long one is cut at a line.
func TestRecordSummaryThatNoBlockHolds(t *testing.T) {
	for _, summary := range []string{"bell \a here", "carriage\rreturn", strings.Repeat("long line\n", 1000)} {
		f, err := Parse([]byte("handoff:\n  last_step_completed: |\n    a\n    b\n"), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Record(StepRecord{Flow: "s", Skill: "frame", Summary: summary}); err != nil {
			t.Fatalf("Record(%.20q): %v", summary, err)
		}
		got := f.Handoff().LastStepCompleted
		switch {
		case strings.HasPrefix(summary, "long"):
			if len(got) > maxSummaryBytes+100 || !strings.HasPrefix(got, "frame: long line\n") || !strings.Contains(got, "cut by baton") {
				t.Errorf("long summary written as %d bytes: %.80q", len(got), got)
			}
		case got != "frame" && got != "frame: "+summary+"\n":
			t.Errorf("summary %q written as %q, want it exactly or the skill's name", summary, got)
		}
	}
}

func TestCheckCycle(t *testing.T) {
	for in, ok := range map[string]bool{
		"":                                      true,
		"x_cycle:\n  completed_steps:\n":        true,
		"x_cycle:\n  completed_steps: [a]\n":    true,
		"x_cycle:\n  completed_steps: 'a,b'\n":  true,
		"x_cycle:\n  completed_steps: 5\n":      false,
		"x_cycle:\n  completed_steps: {a: 1}\n": false,
	} {
		f, err := Parse([]byte(in), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = f.CheckCycle("x")
		if (err == nil) != ok || (err != nil && (!strings.Contains(err.Error(), "x_cycle.completed_steps holds") || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("CheckCycle(%q) = %v", in, err)
		}
	}
}
