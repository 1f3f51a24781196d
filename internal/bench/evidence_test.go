package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

func corpusTask(t *testing.T, id string) *Task {
	t.Helper()
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.ID == id {
			return task
		}
	}
	t.Fatalf("no corpus task %q", id)
	return nil
}

// withPointers is t's plan with subtask i pointed at sections instead.
func withPointers(t *testing.T, task *Task, i int, sections ...string) string {
	t.Helper()
	p := *task.Parsed
	p.Subtasks = append([]plan.Subtask(nil), task.Parsed.Subtasks...)
	p.Subtasks[i].ContextPointers = plan.Pointers{Sections: sections}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A slice that misses its evidence shows as a wrong answer: the fake can
// only quote what it was sent.
func TestEvidenceMissedSliceIsWrongAnswer(t *testing.T) {
	task := corpusTask(t, "cobra-user-guide")
	// Subtask 3 asks about errors; point it at the flags section instead.
	rec, reqs, err := askOnce(context.Background(), task, withPointers(t, task, 2, "Local Flags"), orchestrate.PlannerFull, 4)
	if err != nil {
		t.Fatal(err)
	}
	s := scoreEvidence(task, rec, reqs)
	want := len(task.Evidence[2])
	if s.Missed() != want || s.ViaFallback != 0 || s.InSlice != s.Sentences-want {
		t.Errorf("score %+v, want %d missed and the rest in their slices", s, want)
	}
	if s.AnswerHeld != s.Answer-want {
		t.Errorf("the answer holds %d of %d sentences, want all but %d:\n%s", s.AnswerHeld, s.Answer, want, rec.Answer)
	}
	for _, e := range task.Evidence[2] {
		if strings.Contains(rec.Answer, e) {
			t.Errorf("the answer quotes %q, which no sub-agent was sent", e)
		}
	}
}

// A pointer that names nothing falls back to the whole document: the
// evidence arrives, but it is counted apart, never as recall.
func TestEvidenceFallbackIsNotRecall(t *testing.T) {
	task := corpusTask(t, "cobra-user-guide")
	rec, reqs, err := askOnce(context.Background(), task, withPointers(t, task, 2, "Quarterly Revenue Forecast"), orchestrate.PlannerFull, 4)
	if err != nil {
		t.Fatal(err)
	}
	s := scoreEvidence(task, rec, reqs)
	want := len(task.Evidence[2])
	if s.Fallbacks != 1 || s.ViaFallback != want || s.InSlice != s.Sentences-want || s.Missed() != 0 {
		t.Errorf("score %+v, want 1 fallback carrying %d sentences apart from recall", s, want)
	}
	if s.AnswerHeld != s.Answer {
		t.Errorf("the answer holds %d of %d sentences; the fallback sent them all", s.AnswerHeld, s.Answer)
	}
}

// The lower bound comes from where the evidence is, not from the plan:
// goldmark's plan points at "### Attributes", its evidence is in the
// "Headings" subsection, so the lower bound is that subsection alone.
func TestLowerBoundFromEvidence(t *testing.T) {
	task := corpusTask(t, "goldmark-readme")
	secs := task.EvidenceSections[2]
	if len(secs) != 1 || secs[0].Title != "Headings" {
		t.Fatalf("evidence sections %+v, want the Headings subsection", secs)
	}
	r := task.Doc.Extract(slice.Pointers{Sections: task.Parsed.Subtasks[2].ContextPointers.Sections})
	if len(r.Matched) != 1 {
		t.Fatalf("the plan's pointer cut %+v", r.Matched)
	}
	attr := r.Matched[0]
	if !(secs[0].Line > attr.StartLine && secs[0].EndLine <= attr.EndLine) {
		t.Errorf("Headings %d-%d is not strictly inside the plan's Attributes %d-%d", secs[0].Line, secs[0].EndLine, attr.StartLine, attr.EndLine)
	}
}

func TestLocateEvidenceRejectsBadQuotes(t *testing.T) {
	task := corpusTask(t, "cobra-user-guide")
	tests := map[string]string{
		"not in the document": "Cobra ships with a built-in time machine.",
		"outside its section": task.Evidence[3][0], // subtask 4's quote given to subtask 1
		"two lines":           "one\ntwo",
		"repeated":            "the",
	}
	for name, quote := range tests {
		c := *task
		c.Evidence = append([][]string(nil), task.Evidence...)
		c.Evidence[0] = []string{quote}
		if err := c.locateEvidence(); err == nil {
			t.Errorf("%s: no error for %q", name, quote)
		}
	}
}

// The outline plan's pointers are outline paths that the assembler cuts to
// the intended sections, and a self-answered subtask becomes a lookup.
func TestOutlinePlan(t *testing.T) {
	for _, id := range []string{"mcp-go-sdk-design", "openai-go-api"} {
		task := corpusTask(t, id)
		raw, err := outlinePlan(task)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Parse(raw, plan.Options{Lines: task.Doc.NumLines()})
		if err != nil {
			t.Fatalf("%s: %v\n%s", id, err, raw)
		}
		for i, st := range p.Subtasks {
			if st.IsSelf() {
				t.Errorf("%s: subtask %d is self-answered in an outline plan", id, i+1)
			}
			want := task.Intended[i]
			if len(want) == 0 {
				if st.Skill != plan.LookupSkill {
					t.Errorf("%s: subtask %d: skill %q, want %q", id, i+1, st.Skill, plan.LookupSkill)
				}
				continue
			}
			for j, ptr := range st.ContextPointers.Sections {
				h, _ := FindHeading(task.Doc, want[j])
				r := task.Doc.Extract(slice.Pointers{Sections: []string{ptr}})
				if r.Fallback || len(r.Matched) != 1 || r.Matched[0].StartLine != h.Line || r.Matched[0].EndLine != h.EndLine {
					t.Errorf("%s: subtask %d: pointer %q cut %+v, want lines %d-%d", id, i+1, ptr, r.Matched, h.Line, h.EndLine)
				}
			}
		}
	}
}

func TestSplitSubagentPrompt(t *testing.T) {
	tests := []struct{ in, ctx, sub string }{
		{"<context>\nA line.\n</context>\n\nOverall task (for orientation only): T\n\nYour subtask: Do X.\n", "A line.\n", "Do X."},
		{"Part 2 of 5.\n<context>\nB\n</context>\n\nYour subtask: Y\n", "B\n", "Y"},
		{"no context here\nYour subtask: Z\n", "", "Z"},
	}
	for _, tt := range tests {
		ctx, sub := splitSubagentPrompt(tt.in)
		if ctx != tt.ctx || sub != tt.sub {
			t.Errorf("splitSubagentPrompt(%q) = %q, %q; want %q, %q", tt.in, ctx, sub, tt.ctx, tt.sub)
		}
	}
}

// The fake quotes only what the context block holds: a sentence in the task
// or the subtask line is not quoted.
func TestEvidenceFakeQuotesOnlyTheContext(t *testing.T) {
	f := &evidenceFake{bySubtask: map[string][]string{"Find it.": {"The answer is 42."}}}
	ctx, sub := splitSubagentPrompt("<context>\nNothing here.\n</context>\n\nOverall task (for orientation only): The answer is 42.\n\nYour subtask: Find it.\n")
	if got := quote(f.bySubtask[sub], ctx, noEvidenceReply); got != noEvidenceReply {
		t.Errorf("quoted %q from outside the context", got)
	}
	ctx, _ = splitSubagentPrompt("<context>\nSo: The answer is 42. Done.\n</context>\n\nYour subtask: Find it.\n")
	if got := quote(f.bySubtask[sub], ctx, noEvidenceReply); got != "> The answer is 42.\n" {
		t.Errorf("got %q", got)
	}
}
