package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/workflow"
)

// finishError is a failure after the step's own work succeeded (choosing
// the next step, recording the step's end): the loop returns it as it is,
// without marking the step failed in the run log.
type finishError struct{ err error }

func (e *finishError) Error() string { return e.err.Error() }
func (e *finishError) Unwrap() error { return e.err }

// runStep runs one skill step and records its end: in this process over
// the step's journal, or, with Config.Engine, as one durable engine item
// (durable.go).
func (r *runner) runStep(ctx context.Context, sr *stepRun, pos position) (workflow.Step, error) {
	if r.eng != nil {
		return r.runStepItem(ctx, sr, pos)
	}
	return r.stepBody(ctx, sr, pos)
}

// stepBody is everything a step does, up to and including its step_end in
// the run log, which is what marks it complete for a resume.
func (r *runner) stepBody(ctx context.Context, sr *stepRun, pos position) (workflow.Step, error) {
	summary, err := sr.run(sr.traceStep(ctx))
	if err != nil {
		return workflow.Step{}, err
	}
	r.mu.Lock()
	r.result.Summary = summary
	r.result.Steps++
	r.mu.Unlock()
	sk, _ := r.lib.Get(pos.skill)
	next := workflow.ChooseNext(derefOr(sr.env.nextSkillSet, ""), sk)
	step, err := r.wf.Next(pos.phase, next, r.lib)
	if err != nil {
		err = fmt.Errorf("after step %d (%s): %w", pos.seq, pos.skill, err)
		sr.finishTrace("", err)
		return step, &finishError{err}
	}
	nextSkill := step.Skill
	if step.Move == workflow.Done {
		nextSkill = workflow.DoneValue
	}
	// Record the step in state.yaml, then in the run log: the log's
	// step_end is what marks the step complete for a resume. The
	// journal notes the update first, so that a process dying before
	// step_end does not record the step in state.yaml twice.
	if !sr.recorded {
		if err := sr.j.recordEnding(r.statePath()); err != nil {
			sr.finishTrace("", err)
			return step, &finishError{err}
		}
		err = state.Update(r.statePath(), func(f *state.File) error {
			return r.recordStep(f, sr, nextSkill, summary)
		})
		if err != nil {
			sr.finishTrace("", err)
			return step, &finishError{err}
		}
		crashPoint("state updated")
	}
	r.event(runlog.Event{Type: runlog.StepEnd, Step: fmt.Sprint(pos.seq), Skill: pos.skill, Phase: r.wf.Phases[pos.phase].Name,
		Status: "ok", Next: &runlog.Next{Phase: step.Phase, Skill: nextSkill}, Usage: logUsage(sr.usage)})
	r.logf("step %d %s: done (next: %s)", pos.seq, pos.skill, nextSkill)
	sr.stepEnd(nextSkill, nil)
	return step, nil
}

// errNotRun is a step item the engine reports finished without this
// process having run it: the engine's record says the step ended, and the
// run log does not.
var errNotRun = errors.New("the engine records this step as finished, but the run log does not; the run cannot go on from here")
