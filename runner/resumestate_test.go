package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// nextField is the typed next step of an ok step_end in the run log.
var nextField = regexp.MustCompile(`"next":\{"phase":(-?\d+),"skill":"([^"]*)"\}`)

// editStepEnds rewrites the ok step_end lines of run id's log in dir with
// edit, and fails the test if there were none.
func editStepEnds(t *testing.T, dir, id string, edit func(line string) string) {
	t.Helper()
	p := filepath.Join(dir, ".baton", "runs", id, "events.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines, n := strings.SplitAfter(string(data), "\n"), 0
	for i, l := range lines {
		if strings.Contains(l, `"type":"step_end"`) && strings.Contains(l, `"status":"ok"`) {
			if !nextField.MatchString(l) {
				t.Fatalf("an ok step_end without a typed next step: %s", l)
			}
			lines[i], n = edit(l), n+1
		}
	}
	if n == 0 {
		t.Fatal("the run log has no ok step_end")
	}
	writeFile(t, filepath.Dir(p), "events.jsonl", strings.Join(lines, ""))
}

// A run started by an earlier baton, whose log says where the run goes next
// as the text "<phase index> <skill>" in note, still resumes where it
// stopped.
func TestResumeReadsTheTextFormOfEarlierBatons(t *testing.T) {
	s := llmtest.NewServer(t, finishAll())
	dir, id := failAtImplement(t, s)
	editStepEnds(t, dir, id, func(l string) string {
		return nextField.ReplaceAllString(l, `"note":"$1 $2"`)
	})
	if _, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	var resumed bool
	var skills []string
	for _, e := range runEvents(t, dir) {
		resumed = resumed || e.Type == runlog.Resume
		if resumed && e.Type == runlog.StepStart {
			skills = append(skills, e.Skill)
		}
	}
	if got := strings.Join(skills, " "); got != "implement-change write-report" {
		t.Errorf("steps after the resume: %q, want the failed step and the next", got)
	}
}

// A step_end whose next step cannot be read (neither the typed field nor
// the text form), or a step event whose number is not one, stops the resume
// with an error instead of resuming from the workflow's start.
func TestResumeRefusesAMalformedNextStep(t *testing.T) {
	for name, edit := range map[string]func(string) string{
		"no next":       func(l string) string { return nextField.ReplaceAllString(l, `"status":"ok"`) },
		"text garbage":  func(l string) string { return nextField.ReplaceAllString(l, `"note":"onwards"`) },
		"text no skill": func(l string) string { return nextField.ReplaceAllString(l, `"note":"$1"`) },
		"text extra":    func(l string) string { return nextField.ReplaceAllString(l, `"note":"$1 $2 and more"`) },
		"step number": func(l string) string {
			return strings.Replace(l, `"step":"1"`, `"step":"one"`, 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, finishAll())
			dir, id := failAtImplement(t, s)
			editStepEnds(t, dir, id, edit)
			n := s.Count()
			_, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"})
			if err == nil || !strings.Contains(err.Error(), "refusing to resume") {
				t.Fatalf("Resume = %v, want a refusal", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
			if s.Count() != n {
				t.Errorf("a model was called %d times", s.Count()-n)
			}
		})
	}
}
