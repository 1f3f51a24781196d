package runner

import (
	"fmt"

	"github.com/baton-dev/baton/workflow"
)

// PlannedStep is one step a run would take if every skill went to its
// declared default next step, and what its fresh context would hold.
type PlannedStep struct {
	Phase   string
	Skill   string
	Context *workflow.Context
}

// Plan is the dry run of a workflow: no model is called, nothing is
// written. Window is the budget's window and Threshold the context size at
// which a reset would be due.
type Plan struct {
	Steps     []PlannedStep
	Window    int
	Threshold int
	// WindowKnown is false when baton assumed a window for an unknown
	// model and the workflow set none.
	WindowKnown bool
}

// DryRun walks the workflow by its skills' default next steps and builds
// each step's fresh context. It first makes every check a run makes before
// its first step (skills, workflow, state.yaml, ledger, budget), through
// the same code, so a workspace the run would refuse fails here with the
// same error.
func DryRun(wf *workflow.Workflow, model string) (*Plan, error) {
	r, err := newRunner(Config{Workflow: wf, ModelName: model})
	if err != nil {
		return nil, err
	}
	lib, ws := r.lib, r.ws
	window, known := wf.Window(model)
	p := &Plan{Window: window, Threshold: wf.ThresholdTokens(window), WindowKnown: known}
	phase, name := 0, wf.Phases[0].Skill
	// A real run stops at max_steps; so does the walk of a workflow whose
	// default next steps loop.
	limit := wf.MaxSteps
	if limit <= 0 {
		limit = workflow.DefaultMaxSteps
	}
	for len(p.Steps) < limit {
		sk, ok := lib.Get(name)
		if !ok {
			return nil, fmt.Errorf("unknown skill %q", name)
		}
		sc, err := workflow.StepContext(ws, sk, wf.Capsule, wf.State, "")
		if err != nil {
			return nil, err
		}
		p.Steps = append(p.Steps, PlannedStep{Phase: wf.Phases[phase].Name, Skill: sk.Name, Context: sc})
		step, err := wf.Next(phase, workflow.DefaultNext(sk), lib)
		if err != nil {
			return nil, err
		}
		if step.Move == workflow.Done {
			return p, nil
		}
		phase, name = step.Phase, step.Skill
	}
	return p, fmt.Errorf("the default next steps do not end within %d steps (max_steps); a skill chain loops", limit)
}
