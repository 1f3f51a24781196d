package runner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/workflow"
)

// position is where a run stands between steps.
type position struct {
	phase int
	skill string
	seq   int    // steps started so far
	seed  string // the ledger entry the next sessions start from, if any
}

// position reconstructs where a run stands from its log. Anything in the
// log that cannot be read as baton wrote it is an error: a resume that
// guessed would run a step twice or skip one.
func (r *runner) position(events []runlog.Event) (position, error) {
	pos := position{phase: 0, skill: r.wf.Phases[0].Skill}
	for _, e := range events {
		if e.Run != r.id {
			continue
		}
		switch e.Type {
		case runlog.RunEnd:
			return pos, fmt.Errorf("run %s already ended: %w", r.id, ErrNoUnfinishedRun)
		case runlog.StepStart:
			n, err := stepNumber(e)
			if err != nil {
				return pos, r.badLog(err)
			}
			pos.seq = n
		case runlog.StepEnd:
			if e.Status != "ok" {
				// A failed or interrupted step's Note is its error, not a
				// next step: the step itself is where the run resumes.
				continue
			}
			next, err := stepNext(e)
			if err != nil {
				return pos, r.badLog(err)
			}
			// The log lies under .baton/, where an external agent can
			// write: what it names must be a phase and a skill of this
			// workflow before it indexes a slice or a journal's name.
			_, known := r.lib.Get(next.Skill)
			if (!known && next.Skill != workflow.DoneValue) || next.Phase < 0 || next.Phase >= len(r.wf.Phases) {
				return pos, fmt.Errorf("run log of run %s: step %s ends with next step %d %q, which is not a phase and skill of this workflow; refusing to resume", r.id, e.Step, next.Phase, next.Skill)
			}
			pos.phase, pos.skill = next.Phase, next.Skill
		case runlog.Reset:
			if e.Reason == runlog.ReasonBoundary {
				if entry, err := ledger.Latest(r.ledgerPath()); err == nil {
					pos.seed = string(ledger.Render(*entry))
				}
			}
		case runlog.BoundaryEvaluation:
			if e.Decision == runlog.DecisionContinue {
				pos.seed = ""
			}
		}
	}
	last, err := r.unfinishedStep(events)
	if err != nil {
		return pos, err
	}
	if last > 0 {
		pos.seq = last - 1
	}
	return pos, nil
}

// unfinishedStep returns the number of a step that started and did not end
// well (it failed, was interrupted, or the process died), or 0. Such a step
// is run again from its journal, with the same number: it continues its own
// session.
func (r *runner) unfinishedStep(events []runlog.Event) (int, error) {
	var lastStart, lastEnd int
	for _, e := range events {
		if e.Run != r.id || (e.Type != runlog.StepStart && e.Type != runlog.StepEnd) {
			continue
		}
		n, err := stepNumber(e)
		if err != nil {
			return 0, r.badLog(err)
		}
		if e.Type == runlog.StepStart && n > lastStart {
			lastStart = n
		}
		if e.Type == runlog.StepEnd && e.Status == "ok" && n > lastEnd {
			lastEnd = n
		}
	}
	if lastStart > lastEnd {
		return lastStart, nil
	}
	return 0, nil
}

// badLog is the refusal to resume from a log that baton did not write so.
func (r *runner) badLog(err error) error {
	return fmt.Errorf("run log of run %s: %w; refusing to resume", r.id, err)
}

// errBadStep is wrapped for a step event baton could not have written.
var errBadStep = errors.New("malformed step event")

// stepNumber reads a step event's number, which the runner writes in
// decimal.
func stepNumber(e runlog.Event) (int, error) {
	n, err := strconv.Atoi(e.Step)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s at line %d has step %q, not a step number: %w", e.Type, e.Line, e.Step, errBadStep)
	}
	return n, nil
}

// stepNext reads where the run goes after a step that ended "ok": the
// typed next field, or, in a log an earlier baton wrote, the note
// "<phase index> <skill>".
func stepNext(e runlog.Event) (runlog.Next, error) {
	if e.Next != nil {
		return *e.Next, nil
	}
	f := strings.Fields(e.Note)
	if len(f) == 2 {
		if phase, err := strconv.Atoi(f[0]); err == nil {
			return runlog.Next{Phase: phase, Skill: f[1]}, nil
		}
	}
	return runlog.Next{}, fmt.Errorf("step %s ends with no next step (next is missing and note %q is not \"<phase index> <skill>\"): %w", e.Step, e.Note, errBadStep)
}
