package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// loogleQuestions is how many of a LooGLE document's questions with
// verbatim evidence make its task in the token corpus: a user asks a few
// things of one long document at once.
const loogleQuestions = 3

// LoogleTasks turns LooGLE documents into tasks for the token corpus's
// default-planner (auto) run. Each task asks the document's first
// loogleQuestions questions whose evidence occurs verbatim in it; the plan a
// planner would write is the retrieval planner's for that task (passage
// pointers, since the documents have no headings, as the outline of such a
// document lists them), and each subtask's evidence is the quote of the
// question it asks. A document with no such question gives no task.
func LoogleTasks(docs []LoogleDoc) ([]*Task, error) {
	var out []*Task
	for _, d := range docs {
		var qs []LoogleQA
		for _, qa := range d.QA {
			if s := strings.TrimSpace(qa.S); s != "" && strings.TrimSpace(qa.Q) != "" && strings.Count(d.Text, s) == 1 {
				qs = append(qs, qa)
			}
			if len(qs) == loogleQuestions {
				break
			}
		}
		if len(qs) == 0 {
			continue
		}
		var ask []string
		for _, qa := range qs {
			ask = append(ask, strings.TrimSpace(qa.Q))
		}
		t := &Task{ID: "loogle: " + d.Title, File: d.Title + ".txt", Task: strings.Join(ask, " "), Text: d.Text, Doc: slice.ParseString(d.Text)}
		p := plan.Retrieve(orchestrate.RetrievalInput(t.Doc, t.Task, 0))
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("loogle %q: %w", d.Title, err)
		}
		t.Plan = raw
		if t.Parsed, err = plan.Parse(string(raw), plan.Options{Lines: t.Doc.NumLines()}); err != nil {
			return nil, fmt.Errorf("loogle %q: plan: %w", d.Title, err)
		}
		for _, st := range t.Parsed.Subtasks {
			var ev []string
			for _, qa := range qs {
				if strings.Contains(st.Task, strings.TrimSpace(qa.Q)) {
					ev = append(ev, strings.TrimSpace(qa.S))
				}
			}
			t.Evidence = append(t.Evidence, ev)
		}
		out = append(out, t)
	}
	return out, nil
}

// RunLoogleAuto runs each LooGLE task with the default planner (auto)
// against the evidence fake, whose full and outline planners both answer
// the task's plan, and returns its figures as the token corpus holds them:
// only the auto run and the single call are filled in.
func RunLoogleAuto(ctx context.Context, tasks []*Task) ([]Efficiency, error) {
	var out []Efficiency
	for _, t := range tasks {
		rec, reqs, err := askWith(ctx, t, string(t.Plan), string(t.Plan), orchestrate.PlannerAuto, 4)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.ID, err)
		}
		a := rec.Accounting
		out = append(out, Efficiency{
			ID: t.ID, Context: a.ContextTokens, Subtasks: len(t.Parsed.Subtasks),
			Single: a.SingleCallInputTokens, SingleFits: a.SingleCallFits != nil && *a.SingleCallFits,
			Auto: a.OrchestratedInputTokens, AutoPlanner: rec.Planner,
			Records:  map[string]*orchestrate.Record{VariantAuto: rec},
			Evidence: map[string]EvidenceScore{VariantAuto: scoreEvidence(t, rec, reqs)},
		})
	}
	return out, nil
}

// loogleEfficiency runs the LooGLE documents for the token corpus when
// opts names their folder; none otherwise. A folder that does not hold the
// set is skipped, as the LooGLE section skips it, with a note saying so.
func loogleEfficiency(ctx context.Context, opts Options) ([]Efficiency, string, error) {
	if opts.Loogle == "" {
		return nil, "", nil
	}
	docs, err := LoadLoogle(opts.Loogle)
	if err != nil {
		return nil, fmt.Sprintf("LooGLE documents skipped: %v.", err), nil
	}
	tasks, err := LoogleTasks(docs)
	if err != nil {
		return nil, "", err
	}
	opts.logf("token efficiency: %d LooGLE documents with the default planner", len(tasks))
	effs, err := RunLoogleAuto(ctx, tasks)
	return effs, "", err
}
