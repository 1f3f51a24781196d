package orchestrate

import (
	"errors"
	"fmt"
)

// ErrFallbackCeiling matches (errors.Is) a subtask that failed because its
// fallback to the whole context would have passed the ask's ceiling on
// fallbacks (Config.MaxFallbackTokens).
var ErrFallbackCeiling = errors.New("the whole-context fallbacks reached their ceiling")

// fallbackCeiling is the most the run's fallbacks may send, 0 for none:
// by default one single call's worth, so that a plan whose pointers all
// miss costs at most about one single call more than its slices.
func (r *run) fallbackCeiling() int {
	switch n := r.cfg.MaxFallbackTokens; {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	return r.acct.SingleCallInputTokens
}

// chargeFallback books subtask i's fallback to the whole context against
// the ceiling, at the context's size (its request adds the skill's prompt
// and the instruction), and returns why it may not be sent when the
// fallbacks already booked leave no room for it. Subtasks are cut one at
// a time in plan order, so the first fallbacks of a plan are the ones sent.
func (r *run) chargeFallback(i int) error {
	ceiling := r.acct.FallbackCeiling
	need := r.acct.ContextTokens
	spent := r.acct.Fallbacks * need
	if ceiling > 0 && spent+need > ceiling {
		r.acct.FallbacksRefused++
		return fmt.Errorf("subtask %d: no pointer matched, and sending the whole context (%d tokens) again would take the fallbacks of this ask past %d tokens (--max-fallback-tokens): %w",
			i+1, need, ceiling, ErrFallbackCeiling)
	}
	r.acct.Fallbacks++
	return nil
}
