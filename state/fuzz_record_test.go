package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzRecord: recording a step either fails and changes nothing, or leaves
// a file that parses, where every value outside the keys baton owns is as
// it was and completed_steps kept its shape (a string stays a string, and
// lists the step last).
func FuzzRecord(f *testing.F) {
	addSeeds(f, func(doc string) { f.Add(doc, "plan", "did it", false) })
	f.Add("s_cycle:\n  completed_steps: \"a, b\"\n", "c", "one\ntwo", false)
	f.Add("handoff:\n  last_step_completed: |-\n    x\n    y\ns_cycle:\n  completed_steps: ''\n", "c", "s\n\n  t  \n", true)
	f.Add("handoff:\n  last_step_completed: >\n    x\n    y\n", "c", "a: b\n# c", false)
	f.Fuzz(func(t *testing.T, doc, skill, summary string, listed bool) {
		sf, err := Parse([]byte(doc), "fuzz.yaml")
		if err != nil || strings.TrimSpace(skill) == "" {
			return
		}
		before := cloneValue(sf.doc.tree).(map[string]any)
		orig := string(sf.Bytes())
		oldSteps, _ := sf.Get("s_cycle", "completed_steps")
		err = sf.Record(StepRecord{Flow: "s", Skill: skill, Elapsed: time.Second, Summary: summary, Listed: listed})
		if err != nil {
			if !errors.Is(err, ErrUnsafeEdit) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("unexpected error: %v", err)
			}
			if string(sf.Bytes()) != orig {
				t.Fatal("a failed Record changed the bytes")
			}
			return
		}
		again, err := Parse(sf.Bytes(), "fuzz.yaml")
		if err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, sf.Bytes())
		}
		// Everything but the owned keys reads as before.
		strip := func(m map[string]any) map[string]any {
			m = cloneValue(m).(map[string]any)
			delete(m, "s_cycle")
			delete(m, "metrics")
			if h, ok := m["handoff"].(map[string]any); ok {
				for _, k := range []string{"next_skill", "last_step_completed"} {
					delete(h, k)
				}
				if len(h) == 0 {
					delete(m, "handoff")
				}
			} else {
				delete(m, "handoff") // a scalar handoff is rewritten as a mapping
			}
			return m
		}
		if diff := cmp.Diff(strip(before), strip(again.doc.tree), cmpopts.EquateNaNs(), cmpEmpty); diff != "" {
			t.Fatalf("content baton does not own changed (-before +after):\n%s\n%s", diff, sf.Bytes())
		}
		newSteps, _ := again.Get("s_cycle", "completed_steps")
		if _, wasString := oldSteps.(string); wasString {
			if _, isString := newSteps.(string); !isString {
				t.Fatalf("completed_steps was a string and became %T", newSteps)
			}
		}
		if !listed {
			got := again.Cycle("s").CompletedSteps
			if len(got) == 0 || got[len(got)-1] != strings.TrimSpace(skill) && got[len(got)-1] != skill {
				t.Fatalf("completed_steps %q does not end with %q\n%s", got, skill, sf.Bytes())
			}
		}
	})
}
