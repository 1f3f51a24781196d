package quota

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/baton-dev/baton/llm"
)

// Options configures Model.
type Options struct {
	// Estimate is what a request is charged before it is sent (default
	// llm.EstimateTokens: the prompt counted locally plus MaxTokens).
	Estimate func(*llm.Request) int
	// DefaultPause is the pause a 429 without retry-after sets for all
	// (default llm.DefaultBaseDelay, the retry policy's first backoff).
	DefaultPause time.Duration
	// MaxPause caps the pause one 429 can set (default
	// llm.DefaultMaxRetryAfter, the longest retry-after the retry policy
	// honours): a provider asking for longer ends that call's retries,
	// and the other processes should find out for themselves rather than
	// wait for hours.
	MaxPause time.Duration
}

// Shared is a Model whose calls wait out the shared pause and are charged
// to the shared budget before they are sent, and whose 429s pause every
// process. It is meant to sit inside the retry policy, like llm.Limited:
// each attempt waits and is charged on its own, and a retry waits out the
// pause its own 429 set.
type Shared struct {
	m Model
	b *Budget
	o Options
}

// Model is the one-method model interface Shared wraps.
type Model = llm.Model

// NewModel wraps m so that its calls respect b.
func NewModel(m Model, b *Budget, o Options) *Shared {
	if o.Estimate == nil {
		o.Estimate = llm.EstimateTokens
	}
	if o.DefaultPause <= 0 {
		o.DefaultPause = llm.DefaultBaseDelay
	}
	if o.MaxPause <= 0 {
		o.MaxPause = llm.DefaultMaxRetryAfter
	}
	return &Shared{m: m, b: b, o: o}
}

// Generate waits for the pause and the budget, sends the call, and then
// corrects the charge to the tokens the provider reported. A 429 is charged
// nothing (the provider spent none of its budget on it; the retry is
// charged again) and pauses all processes for its retry-after.
func (s *Shared) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	c, err := s.b.Take(ctx, s.o.Estimate(req))
	if err != nil {
		return nil, err
	}
	resp, err := s.m.Generate(ctx, req)
	// Bookkeeping after the call must not be cut short by the caller's
	// cancellation, and must not fail a call that was answered: its
	// failure only leaves the charge at the estimate or skips a pause.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var pe *llm.ProviderError
	switch {
	case err == nil && resp != nil:
		u := resp.Usage
		if spent := u.PromptTokens() + u.OutputTokens; spent > 0 {
			_ = s.b.Settle(bctx, c, int(spent))
		}
	case errors.As(err, &pe) && pe.StatusCode == http.StatusTooManyRequests:
		_ = s.b.Settle(bctx, c, 0)
		pause := s.o.DefaultPause
		if pe.RetryAfter > 0 {
			pause = pe.RetryAfter
		}
		_ = s.b.Pause(bctx, min(pause, s.o.MaxPause))
	}
	return resp, err
}
