package workflow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/tokens"
)

// NextSkillKey is the SKILL.md metadata key holding a skill's default next
// step: a skill name, or "done". It lives in metadata because the Agent
// Skills specification leaves host settings nowhere else.
const NextSkillKey = "next-skill"

// DoneValue is the next-skill value that ends the run.
const DoneValue = "done"

// ErrBackwards is wrapped when a next-skill value names the starting skill
// of an earlier phase: phases run in order, and going back would replay work
// the ledger already froze.
var ErrBackwards = errors.New("next skill belongs to an earlier phase")

// ErrUnknownSkill is wrapped when a next-skill value names no skill in the
// library.
var ErrUnknownSkill = errors.New("unknown next skill")

// DefaultNext returns the next step sk declares in its metadata, trimmed,
// or "" when it declares none.
func DefaultNext(sk *skill.Skill) string {
	if sk == nil {
		return ""
	}
	return strings.TrimSpace(sk.Metadata[NextSkillKey])
}

// ChooseNext picks the next-skill value for a finished step: the handoff
// value the step's agent wrote to state.yaml wins; otherwise the skill's
// declared default.
func ChooseNext(handoff string, sk *skill.Skill) string {
	if h := strings.TrimSpace(handoff); h != "" {
		return h
	}
	return DefaultNext(sk)
}

func isDone(s string) bool { return strings.EqualFold(strings.TrimSpace(s), DoneValue) }

// Move says what happens after a step.
type Move int

const (
	// Continue runs Skill next, inside the same phase.
	Continue Move = iota
	// Boundary ends the current phase; Phase starts with Skill. The runner
	// makes its reset evaluation here.
	Boundary
	// Done ends the run.
	Done
)

func (m Move) String() string {
	switch m {
	case Continue:
		return "continue"
	case Boundary:
		return "boundary"
	case Done:
		return "done"
	}
	return fmt.Sprintf("Move(%d)", int(m))
}

// Step is the outcome of Next.
type Step struct {
	Move  Move
	Phase int    // index into Phases of the phase the next step runs in
	Skill string // the skill to run next; empty for Done
}

// Next decides where a run goes after a step of phase current finishes
// with the next-skill value next (see ChooseNext):
//
//   - "done" ends the run.
//   - "" ends the current phase: the next phase starts, or the run ends
//     after the last one.
//   - the starting skill of a later phase crosses a boundary into it (phases
//     in between are skipped, which the caller may record).
//   - the starting skill of an earlier phase is an error wrapping
//     ErrBackwards.
//   - any other skill continues the current phase, including the current
//     phase's own starting skill (a loop).
//
// When lib is not nil, a skill it does not know is an error wrapping
// ErrUnknownSkill. Names match as skill.Key does.
func (w *Workflow) Next(current int, next string, lib *skill.Library) (Step, error) {
	if current < 0 || current >= len(w.Phases) {
		return Step{}, fmt.Errorf("workflow %s: phase index %d out of range (have %d phases)", w.Path, current, len(w.Phases))
	}
	next = strings.TrimSpace(next)
	if isDone(next) {
		return Step{Move: Done, Phase: current}, nil
	}
	if next == "" {
		if current+1 < len(w.Phases) {
			return Step{Move: Boundary, Phase: current + 1, Skill: w.Phases[current+1].Skill}, nil
		}
		return Step{Move: Done, Phase: current}, nil
	}
	key := skill.Key(next)
	if skill.Key(w.Phases[current].Skill) != key {
		for i := current + 1; i < len(w.Phases); i++ {
			if skill.Key(w.Phases[i].Skill) == key {
				return Step{Move: Boundary, Phase: i, Skill: w.Phases[i].Skill}, nil
			}
		}
		for i := 0; i < current; i++ {
			if skill.Key(w.Phases[i].Skill) == key {
				return Step{}, fmt.Errorf("next skill %q starts phase %q, before the current phase %q: %w",
					next, w.Phases[i].Name, w.Phases[current].Name, ErrBackwards)
			}
		}
	}
	if lib != nil {
		sk, ok := lib.Get(next)
		if !ok {
			return Step{}, fmt.Errorf("next skill %q: %w", next, ErrUnknownSkill)
		}
		next = sk.Name
	}
	return Step{Move: Continue, Phase: current, Skill: next}, nil
}

// PhaseIndex returns the index of the phase named name, or -1.
func (w *Workflow) PhaseIndex(name string) int {
	for i, ph := range w.Phases {
		if ph.Name == name {
			return i
		}
	}
	return -1
}

// Window returns the context window a run of w budgets against: the
// workflow's window_tokens when set, otherwise the window of model (see
// tokens.Window; known is false when baton had to assume a default).
func (w *Workflow) Window(model string) (window int, known bool) {
	return tokens.Window(model, w.WindowTokens)
}

// ThresholdTokens is the context size at which a reset is due for a given
// window: threshold_fraction × window, rounded down.
func (w *Workflow) ThresholdTokens(window int) int {
	return int(w.ThresholdFraction * float64(window))
}
