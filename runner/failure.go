package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
)

// FailureKind says why a step stopped before it finished, and so whether a
// resume can get further. It is recorded in the step's step_end event.
type FailureKind string

// The kinds of a step that stopped.
const (
	// FailInterrupted: the run was cancelled (Ctrl-C, SIGTERM). Resume goes on.
	FailInterrupted FailureKind = "interrupted"
	// FailTransient: the provider failed in a way that may pass (a 5xx, a
	// 429, a cut connection) after every retry. Resume sends the call again.
	FailTransient FailureKind = "provider_unavailable"
	// FailRefused: the provider refused the request (a 4xx other than 408,
	// 409 and 429). A resume sends the same request, which it may refuse
	// again.
	FailRefused FailureKind = "provider_refused"
	// FailRefusedAgain: the provider refused the same request on an earlier
	// attempt of the step too: resuming again will keep failing.
	FailRefusedAgain FailureKind = "provider_refused_again"
	// FailMaxTurns: the step used --max-turns tool rounds without finishing.
	// A resume with a higher --max-turns goes on where it stopped.
	FailMaxTurns FailureKind = "max_turns"
	// FailAgent: the external agent command failed. A resume runs it again.
	FailAgent FailureKind = "agent_failed"
	// FailOther: anything else (the message says what to fix).
	FailOther FailureKind = "failed"
)

// ErrMaxTurns is wrapped when a step stops at its tool-round limit.
var ErrMaxTurns = errors.New("no finish")

// StepError is a step that stopped before it finished. The step stays
// resumable under its number: its journal holds everything it did.
type StepError struct {
	Step  int
	Skill string
	Kind  FailureKind
	// MaxTurns is the tool-round limit the step ran under.
	MaxTurns int
	Err      error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %d (%s): %v", e.Step, e.Skill, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// Resumable reports whether `baton resume`, as it stands, can get further
// than this attempt did (for FailMaxTurns, with a higher --max-turns).
func (e *StepError) Resumable() bool {
	switch e.Kind {
	case FailInterrupted, FailTransient, FailMaxTurns, FailAgent:
		return true
	}
	return false
}

// Advice says what to change before a resume can succeed, for a step that
// a plain resume would only repeat; "" when there is nothing to add.
func (e *StepError) Advice() string {
	if e.Kind != FailRefused && e.Kind != FailRefusedAgain {
		return ""
	}
	fix := "change what it refused (the model with --model, the workflow or the files the step reads)"
	var pe *llm.ProviderError
	if errors.As(e.Err, &pe) {
		switch pe.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			fix = "check the provider's API key and its access to the model"
		case http.StatusNotFound:
			fix = "check the model name (--model) and --base-url"
		}
	}
	return fix + ", or start over with baton run --fresh"
}

// repeatedError is a provider's refusal of a request it had refused on an
// earlier attempt of the same step.
type repeatedError struct{ err error }

func (e *repeatedError) Error() string {
	return fmt.Sprintf("%v (the provider refused this same request on an earlier attempt too: resuming again will keep failing)", e.err)
}

func (e *repeatedError) Unwrap() error { return e.err }

// stepFailed records a step that stopped before it finished. Its step_end
// says how (status "interrupted" or "failed", the kind of failure first in
// the note), and does not end the step for a resume: the step keeps its
// number and its journal.
func (r *runner) stepFailed(ctx context.Context, pos position, err error) error {
	se := &StepError{Step: pos.seq, Skill: pos.skill, Kind: r.classify(ctx, err), MaxTurns: r.cfg.MaxTurns, Err: err}
	status := "failed"
	if se.Kind == FailInterrupted {
		status = "interrupted"
	}
	r.event(runlog.Event{Type: runlog.StepEnd, Step: fmt.Sprint(pos.seq), Skill: pos.skill, Phase: r.wf.Phases[pos.phase].Name,
		Status: status, Note: fmt.Sprintf("%s: %v", se.Kind, err)})
	return se
}

// classify says what kind of failure err is.
func (r *runner) classify(ctx context.Context, err error) FailureKind {
	var pe *llm.ProviderError
	var rep *repeatedError
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return FailInterrupted
	case errors.Is(err, ErrMaxTurns):
		return FailMaxTurns
	case errors.As(err, &rep):
		return FailRefusedAgain
	case errors.As(err, &pe) && pe.IsRetryable():
		return FailTransient
	case errors.As(err, &pe):
		return FailRefused
	case r.cfg.AgentCmd != "" && !errors.Is(err, ErrJournalChain):
		return FailAgent
	}
	return FailOther
}
