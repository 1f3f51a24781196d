// Package budget decides when a long-running session must be reset. It holds
// the rules of the context-budget discipline that `baton run` enforces, in
// one place, so that skills and hosts refer to them instead of copying them:
//
//   - Context size is measured every turn from the usage the provider
//     reported: fresh input plus cache reads plus cache writes, which is the
//     whole prompt the model processed.
//   - The projection is the largest turn so far in this session plus what
//     the next phase is expected to add.
//   - At every phase boundary a reset is evaluated and recorded, whether or
//     not it resets.
//   - When the projection reaches threshold_fraction × window_tokens the
//     session is reset at the next safe point, after a complete ledger entry
//     has been written. A threshold crossed mid-phase whose reset could not
//     happen (no complete ledger entry) is a miss; two misses in a row in one
//     phase force an immediate reset.
//
// The package does no I/O: the runner feeds it measurements and records the
// decisions it returns.
package budget

import (
	"errors"
	"fmt"

	"github.com/baton-dev/baton/llm"
)

// DefaultFraction is the default reset threshold as a fraction of the
// window: early enough that a reset happens before quality degrades and
// before every turn pays for a nearly full window.
const DefaultFraction = 0.65

// MissesBeforeForcedReset is how many consecutive misses in one phase force
// an immediate reset.
const MissesBeforeForcedReset = 2

// ErrBadFraction is returned for a threshold fraction outside (0, 1).
var ErrBadFraction = errors.New("threshold_fraction must be between 0 and 1, exclusive")

// Budget is a context window and the fraction of it at which to reset.
type Budget struct {
	Window   int     // tokens
	Fraction float64 // in (0, 1)
}

// New validates and returns a Budget.
func New(window int, fraction float64) (Budget, error) {
	if window <= 0 {
		return Budget{}, fmt.Errorf("window_tokens must be positive, got %d", window)
	}
	if fraction <= 0 || fraction >= 1 {
		return Budget{}, fmt.Errorf("%w (got %v)", ErrBadFraction, fraction)
	}
	return Budget{Window: window, Fraction: fraction}, nil
}

// Threshold is the context size, in tokens, at which a reset is due.
func (b Budget) Threshold() int { return int(float64(b.Window) * b.Fraction) }

// ContextTokens is the size of the context of one turn as the provider
// reported it.
func ContextTokens(u llm.Usage) int { return int(u.PromptTokens()) }

// Reason says why a reset happens.
type Reason string

const (
	ReasonBoundary  Reason = "boundary"            // evaluated at a phase boundary
	ReasonThreshold Reason = "threshold"           // crossed mid-phase, reset at a safe point
	ReasonForced    Reason = "forced_after_misses" // two misses in a row
)

// Decision is the outcome of one evaluation, recorded in the run log
// whether or not it resets.
type Decision struct {
	Reset       bool    `json:"reset"`
	Reason      Reason  `json:"reason,omitempty"`
	Projected   int     `json:"projected_tokens"`
	Threshold   int     `json:"threshold_tokens"`
	Window      int     `json:"window_tokens"`
	Fraction    float64 `json:"fraction"` // Projected / Window
	LargestTurn int     `json:"largest_turn_tokens"`
}

// Session measures one model session (one fresh context) turn by turn.
type Session struct {
	b       Budget
	largest int
	last    int
	turns   int
	misses  int
}

// NewSession starts measuring a fresh session.
func (b Budget) NewSession() *Session { return &Session{b: b} }

// Observe records the usage of one turn.
func (s *Session) Observe(u llm.Usage) {
	n := ContextTokens(u)
	s.turns++
	s.last = n
	if n > s.largest {
		s.largest = n
	}
}

// Turns is how many turns were observed.
func (s *Session) Turns() int { return s.turns }

// Largest is the largest context of any turn so far.
func (s *Session) Largest() int { return s.largest }

// Project is the largest turn so far plus what is expected next.
func (s *Session) Project(expect int) int {
	if expect < 0 {
		expect = 0
	}
	return s.largest + expect
}

func (s *Session) decide(projected int, reason Reason) Decision {
	d := Decision{
		Projected:   projected,
		Threshold:   s.b.Threshold(),
		Window:      s.b.Window,
		LargestTurn: s.largest,
	}
	if s.b.Window > 0 {
		d.Fraction = float64(projected) / float64(s.b.Window)
	}
	if projected >= d.Threshold {
		d.Reset, d.Reason = true, reason
	}
	return d
}

// AtBoundary evaluates a reset at a phase boundary, given what the next
// phase is expected to add. A run that never approaches the threshold makes
// no forced resets.
func (s *Session) AtBoundary(nextPhaseExpect int) Decision {
	return s.decide(s.Project(nextPhaseExpect), ReasonBoundary)
}

// MidPhase evaluates between tool rounds. It returns a reset decision when
// the threshold is crossed.
func (s *Session) MidPhase(expect int) Decision {
	return s.decide(s.Project(expect), ReasonThreshold)
}

// Miss records that a due reset could not happen at its safe point (the
// ledger entry offered was incomplete, so resetting would lose state). It
// reports whether the reset must now be forced immediately: after
// MissesBeforeForcedReset misses in a row in one phase the runner stops
// waiting for the session and writes the ledger entry itself.
func (s *Session) Miss() (force bool) {
	s.misses++
	return s.misses >= MissesBeforeForcedReset
}

// Forced returns the decision of a forced reset, for the run log.
func (s *Session) Forced(expect int) Decision {
	d := s.decide(s.Project(expect), ReasonForced)
	d.Reset, d.Reason = true, ReasonForced
	return d
}

// Misses is the count of consecutive misses in this session's phase.
func (s *Session) Misses() int { return s.misses }

// PhaseChanged clears the miss count: misses count "in a row in one phase".
func (s *Session) PhaseChanged() { s.misses = 0 }
