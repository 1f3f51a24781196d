package runlog

// The continuous-session baseline of a workflow run.
//
// A workflow run gives each step a fresh session and resets a session whose
// context reaches the threshold, seeding the new one from the ledger. What a
// user would do instead is keep one session going for the whole job, so
// that nothing is ever dropped. That alternative is not run; it is modelled
// from the log: the same model calls, each sent with its own context plus
// every token of context the run had dropped before it (each earlier step's
// last context, and the context in hand at each reset). It assumes the
// continuous session would make the same calls and never compact; a client
// that compacts on its own would send less than this.

// Continuous is the continuous-session baseline of one run's log.
type Continuous struct {
	// Calls are the paid model calls of the run, in log order.
	Calls []ContinuousCall
	// SentTokens is the context the run's paid calls sent.
	SentTokens int
	// InputTokens is what the same calls would have sent in one
	// continuous session: SentTokens plus each call's Dropped.
	InputTokens int
	// Dropped is all the context the run dropped (step changes and
	// resets), whether or not a later call would have carried it.
	Dropped int
}

// ContinuousCall is one paid model call and what a continuous session
// would have carried on top of it.
type ContinuousCall struct {
	Line     int    // the model_call's line in the log
	Step     string // the step id
	Skill    string
	Turn     int
	Subagent bool
	// Sent is the context the call sent (context_tokens).
	Sent int
	// Dropped is the context the run had dropped before the call, which a
	// continuous session would still carry; 0 for a sub-agent's call,
	// whose session is its own in either case.
	Dropped int
}

// Baseline is what the call would have sent in a continuous session.
func (c ContinuousCall) Baseline() int { return c.Sent + c.Dropped }

// SavingsRatio is the share of the baseline's input the run did not send:
// 1 − SentTokens/InputTokens. ok is false when there is no baseline (no
// paid call with a known context).
func (c Continuous) SavingsRatio() (ratio float64, ok bool) {
	if c.InputTokens <= 0 {
		return 0, false
	}
	return 1 - float64(c.SentTokens)/float64(c.InputTokens), true
}

// ContinuousSession computes the baseline from the events of one run's log,
// in file order. Calls answered from a step journal (replayed) were paid
// when first made and are not counted again, nor are calls whose context is
// unknown (an --agent-cmd step's). A reset a resumed step replays was
// counted when it happened. The log may be torn or partial: what it holds
// is what is counted.
func ContinuousSession(events []Event) Continuous {
	var (
		out     Continuous
		dropped int    // dropped so far
		last    int    // the context of the step session in hand
		step    string // the step whose session that is
	)
	for _, e := range events {
		switch e.Type {
		case StepStart:
			// A resumed step (the same id again) continues its own
			// session from its journal: nothing is dropped.
			if e.Step != step {
				dropped += last
				last, step = 0, e.Step
			}
		case Reset:
			switch {
			case e.Replayed:
			case e.Reason == ReasonBoundary:
				// Between steps: the next step_start drops the last
				// context; context_tokens here projects the next phase.
				continue
			case e.ContextTokens > 0:
				dropped += e.ContextTokens
			default:
				dropped += last
			}
			last = 0
		case ModelCall:
			sent := callContext(e)
			if sent <= 0 {
				continue
			}
			if !e.Subagent {
				if e.Step != "" && e.Step != step {
					// A log without step_start events: the step change
					// shows in the calls.
					dropped += last
					step = e.Step
				}
				last = sent
			}
			if e.Replayed || e.Note == "answered from the step journal" {
				continue
			}
			c := ContinuousCall{Line: e.Line, Step: e.Step, Skill: e.Skill, Turn: e.Turn, Subagent: e.Subagent, Sent: sent}
			if !e.Subagent {
				c.Dropped = dropped
			}
			out.Calls = append(out.Calls, c)
			out.SentTokens += c.Sent
			out.InputTokens += c.Baseline()
		}
	}
	out.Dropped = dropped
	return out
}

// callContext is the context a model_call sent: context_tokens, or for a
// log written before that field, the usage's input and cache tokens.
func callContext(e Event) int {
	if e.ContextTokens > 0 {
		return e.ContextTokens
	}
	if e.Usage != nil {
		return e.Usage.InputTokens + e.Usage.CacheReadTokens + e.Usage.CacheWriteTokens
	}
	return 0
}
