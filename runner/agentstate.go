package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/workflow"
)

// Skill suites written for command-line agents tell the agent to keep the
// handoff in state.yaml itself: set handoff.next_skill, write a summary
// under last_step_completed, sometimes append to completed_steps. After an
// external step baton therefore reads state.yaml back and compares it with
// the copy taken before the process started. What the agent wrote there is
// honoured: its next_skill is the run's next step and its own lines are
// kept. A handoff block is merged on top; where both set a field
// differently the block wins and a warning says so.
//
// The copy is kept beside the step's journal, so a step resumed from its
// journal (the process finished, baton stopped before recording the step)
// still compares with the file as it was before the agent ran.

// stateEdits is what an external agent changed in state.yaml itself.
type stateEdits struct {
	// nextSkill is the next step as the agent left it in
	// handoff.next_skill (or the cycle's next_skill), when it changed it.
	nextSkill *string
	// changed lists the other handoff fields it changed.
	changed []string
	// listed: it appended its own skill to <flow>_cycle.completed_steps.
	listed bool
	// keepLastStep: it wrote last_step_completed and no block summary
	// overrides it, so the bookkeeping leaves its words alone.
	keepLastStep bool
	after        *state.File
}

func (e *stateEdits) handedOff() bool { return e.nextSkill != nil || len(e.changed) > 0 }

func (e *stateEdits) has(field string) bool { return slices.Contains(e.changed, field) }

// stateBefore is state.yaml as it was before this step's agent process
// first started.
func (s *stepRun) stateBefore() (*state.File, error) {
	copyPath := s.stateCopyPath()
	if _, err := os.Lstat(copyPath); err == nil {
		f, err := state.Load(copyPath)
		if err != nil {
			return nil, err
		}
		return state.Parse(f.Bytes(), s.r.statePath())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("state copy %s: %w", copyPath, err)
	}
	f, err := state.Load(s.r.statePath())
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(copyPath, f.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("state copy for step %d: %w", s.seq, err)
	}
	return f, nil
}

// stateCopyPath is where the copy of state.yaml taken before the step's
// agent ran is kept.
func (s *stepRun) stateCopyPath() string {
	return filepath.Join(batondir.At(s.r.ws.Root()).Steps(s.r.id), fmt.Sprintf("%03d-%s.state-before.yaml", s.seq, fileSafe(s.skillName)))
}

// readStateEdits reads state.yaml after the agent's process and says what
// it changed there since before. A next_skill naming no skill of the
// workflow is an error, as it is in a handoff block.
func (s *stepRun) readStateEdits(before *state.File, h agentHandoff) (stateEdits, error) {
	after, err := state.Load(s.r.statePath())
	if err != nil {
		// The agent broke the file. Nothing is lost: say where the copy
		// from before the step is, for the user to compare or restore.
		rel, _ := filepath.Rel(s.r.ws.Root(), s.stateCopyPath())
		return stateEdits{}, fmt.Errorf("after the agent's step: %w (the file as it was before the step is %s)", err, filepath.ToSlash(rel))
	}
	e := stateEdits{after: after}
	cyc := s.r.wf.Flow + "_cycle"
	switch {
	case after.Changed(before, "handoff", "next_skill"):
		v := strings.TrimSpace(after.Handoff().NextSkill)
		e.nextSkill = &v
	case after.Changed(before, cyc, "next_skill"):
		// baton keeps the two in step, so a suite that names its next
		// step in the cycle block means the same thing.
		v := strings.TrimSpace(after.Cycle(s.r.wf.Flow).NextSkill)
		e.nextSkill = &v
	}
	if e.nextSkill != nil {
		if v := *e.nextSkill; v != "" && blank(h.NextSkill) {
			if err := s.nextSkillProblem(v); err != nil {
				return stateEdits{}, fmt.Errorf("in %s, as the agent left it: %w", s.r.wf.State, err)
			}
		}
	}
	for _, k := range []string{"open_decisions", "required_reading", "context", "decisions", "last_step_completed"} {
		if after.Changed(before, "handoff", k) {
			e.changed = append(e.changed, k)
		}
	}
	was, now := before.Cycle(s.r.wf.Flow).CompletedSteps, after.Cycle(s.r.wf.Flow).CompletedSteps
	e.listed = len(now) > len(was) && skill.Key(now[len(now)-1]) == skill.Key(s.skillName)
	return e, nil
}

func blank(p *string) bool { return p == nil || strings.TrimSpace(*p) == "" }

// warnConflicts says where the block and the agent's own edits of
// state.yaml disagree; the block's values are the ones written.
func (s *stepRun) warnConflicts(h agentHandoff, e stateEdits) {
	after := e.after.Handoff()
	conflict := func(field, block, file string) {
		s.warn(fmt.Sprintf("the handoff block and the agent's own edit of %s disagree on %s (%s in the block, %s in the file); the block wins",
			s.r.wf.State, field, block, file))
	}
	if !blank(h.NextSkill) && e.nextSkill != nil && *e.nextSkill != "" && skill.Key(*h.NextSkill) != skill.Key(*e.nextSkill) {
		conflict("next_skill", fmt.Sprintf("%q", strings.TrimSpace(*h.NextSkill)), fmt.Sprintf("%q", *e.nextSkill))
	}
	if h.Context != nil && e.has("context") && *h.Context != after.Context {
		conflict("context", fmt.Sprintf("%q", *h.Context), fmt.Sprintf("%q", after.Context))
	}
	for _, l := range []struct {
		field       string
		block, file []string
	}{{"open_decisions", h.OpenDecisions, after.OpenDecisions}, {"required_reading", h.RequiredReading, after.RequiredReading}} {
		if l.block != nil && e.has(l.field) && !slices.Equal(l.block, l.file) {
			conflict(l.field, fmt.Sprintf("%q", l.block), fmt.Sprintf("%q", l.file))
		}
	}
	if strings.TrimSpace(h.Summary) != "" && e.has("last_step_completed") && strings.Contains(after.LastStepCompleted, "\n") {
		s.warn(fmt.Sprintf("the agent wrote handoff.last_step_completed in %s and a summary in its handoff block; the block's summary is written", s.r.wf.State))
	}
}

// nextSkillProblem says why name cannot be the next step after this one, or
// returns nil: it must name a skill of the workflow, or done, and not the
// first skill of an earlier phase. The error names the known skills, so
// that a model or an agent can correct itself.
func (s *stepRun) nextSkillProblem(name string) error {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, workflow.DoneValue) {
		return nil
	}
	if _, ok := s.r.lib.Get(name); !ok {
		var own, builtin []string
		for _, sk := range s.r.lib.List() {
			if sk.BuiltIn {
				builtin = append(builtin, sk.Name)
			} else {
				own = append(own, sk.Name)
			}
		}
		known := strings.Join(own, ", ")
		if len(builtin) > 0 {
			known += " (built in: " + strings.Join(builtin, ", ") + ")"
		}
		return fmt.Errorf("next_skill %q names no skill of this workflow; use one of %s, or %s to end the run", name, known, workflow.DoneValue)
	}
	// The one other refusal Next makes, given a known skill: going back
	// to an earlier phase. Its message names the skill and both phases.
	if _, err := s.r.wf.Next(s.phase, name, s.r.lib); err != nil {
		return err
	}
	return nil
}

// recordStep is the bookkeeping after a step: next is where the run goes,
// summary what the step reported. An agent that keeps the cockpit itself
// may already have written the same next step, in its own spelling and
// with its own comment, or listed itself in completed_steps: what it wrote
// stays.
func (r *runner) recordStep(f *state.File, sr *stepRun, next, summary string) error {
	if skill.Key(f.Handoff().NextSkill) != skill.Key(next) {
		if err := f.SetHandoff(state.HandoffUpdate{NextSkill: &next}); err != nil {
			return err
		}
	}
	rec := state.StepRecord{Flow: r.wf.Flow, Skill: sr.skillName, Elapsed: sr.elapsed, Usage: state.Usage(sr.usage), Summary: summary}
	if sr.env != nil && sr.env.agentState != nil {
		rec.Listed = sr.env.agentState.listed
		rec.KeepLastStep = sr.env.agentState.keepLastStep
	}
	return f.Record(rec)
}

// stateWriteHint adds to the refusal of a write to state.yaml what to do
// instead: the file is read-only to tools so that every handoff value is
// checked before it lands and the user's other lines stay as they are.
func (e *toolEnv) stateWriteHint(path string, err error) error {
	if e.statePath == "" || !errors.Is(err, workspace.ErrProtected) {
		return err
	}
	abs := filepath.Join(e.ws.Root(), filepath.FromSlash(path))
	if !strings.EqualFold(filepath.Clean(abs), filepath.Clean(e.statePath)) {
		return err
	}
	return fmt.Errorf("write %s: %w: the state file changes only through the %s tool (next_skill, open_decisions, required_reading, context, decision), which checks each value and leaves the file's other lines as they are",
		path, workspace.ErrProtected, toolUpdateState)
}
