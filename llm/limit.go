package llm

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/baton-dev/baton/tokens"
)

// Limits bounds how hard baton presses on a provider. Zero fields mean no
// limit of that kind.
type Limits struct {
	// Concurrency is the most calls in flight at once; 0 is unlimited.
	Concurrency int
	// RequestsPerMinute paces calls evenly (one every minute/RPM) rather than
	// letting a minute's worth start together: providers often enforce their
	// per-minute limits over shorter windows.
	RequestsPerMinute int
	// TokensPerMinute is a token bucket holding one minute's worth of tokens,
	// refilled continuously, as providers meter input and output tokens. A
	// burst of sub-agents may therefore start together as long as the bucket
	// holds enough.
	TokensPerMinute int
	// Estimate says how many tokens a request will cost against
	// TokensPerMinute. Nil means EstimateTokens.
	Estimate func(*Request) int
}

// EstimateTokens is the default cost of a request for rate limiting: the
// locally counted prompt (system and messages) plus MaxTokens, the most the
// reply can add. It over-estimates on purpose: spending budget the call did
// not use is cheaper than a 429.
func EstimateTokens(req *Request) int {
	if req == nil {
		return 0
	}
	c := tokens.ForModel(req.Model)
	n := c.Count(req.System)
	for _, m := range req.Messages {
		n += c.Count(m.PromptText())
	}
	for _, t := range req.Tools {
		n += c.Count(t.PromptText())
	}
	return n + max(req.MaxTokens, 0)
}

// Limited is a Model that waits for a concurrency slot and for request and
// token budget before each call. All waits honour ctx.
//
// It is meant to sit inside the retry policy: WithRetry(WithLimits(p, l), rp).
// Each attempt then spends budget of its own, and the slot is released while
// the retry policy sleeps on a backoff, so other calls can use it.
//
// A request whose estimate exceeds the whole TokensPerMinute budget is not
// refused and does not wait forever: it is charged the full bucket, so it
// starts once the bucket is full and calls after it wait for the refill. The
// provider, which knows its real limits, then decides whether to accept it.
type Limited struct {
	m        Model
	sem      chan struct{}
	rpm      *rate.Limiter
	tpm      *rate.Limiter
	estimate func(*Request) int
}

// WithLimits wraps m so that its calls respect l. Negative values in l are
// treated as zero (no limit).
func WithLimits(m Model, l Limits) *Limited {
	lm := &Limited{m: m, estimate: l.Estimate}
	if lm.estimate == nil {
		lm.estimate = EstimateTokens
	}
	if l.Concurrency > 0 {
		lm.sem = make(chan struct{}, l.Concurrency)
	}
	if l.RequestsPerMinute > 0 {
		lm.rpm = rate.NewLimiter(rate.Every(time.Minute/time.Duration(l.RequestsPerMinute)), 1)
	}
	if l.TokensPerMinute > 0 {
		lm.tpm = rate.NewLimiter(rate.Limit(float64(l.TokensPerMinute)/60), l.TokensPerMinute)
	}
	return lm
}

// Generate waits for a slot, then for rate budget, then calls the wrapped
// model. The slot is taken first so that calls leave the rate limiter in the
// order and at the pace it granted them; taking budget first would let calls
// queued on the slot bunch up and exceed the rate once slots free.
func (l *Limited) Generate(ctx context.Context, req *Request) (*Response, error) {
	if l.sem != nil {
		select {
		case l.sem <- struct{}{}:
			defer func() { <-l.sem }()
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free call slot: %w", ctx.Err())
		}
	}
	if err := l.waitBudget(ctx, req); err != nil {
		return nil, err
	}
	return l.m.Generate(ctx, req)
}

// rateRefusedKey marks the context of an attempt that follows a 429 from
// the provider (retry.go). Its request was charged to the token bucket when
// it was first tried; a provider that refused it spent none of its own
// budget on it, so charging the retry again would pace the calls at half the
// limit (measured: 0.500 of a 20,000 tokens-per-minute limit, against 0.990
// without the bucket).
type rateRefusedKey struct{}

func rateRefused(ctx context.Context) bool {
	v, _ := ctx.Value(rateRefusedKey{}).(bool)
	return v
}

// waitBudget reserves request and token budget together and waits for the
// later of the two. On cancellation both reservations are returned, so a
// call that never went out spends nothing.
func (l *Limited) waitBudget(ctx context.Context, req *Request) error {
	if l.rpm == nil && l.tpm == nil {
		return ctx.Err()
	}
	now := time.Now()
	var rs []*rate.Reservation
	cancel := func() {
		for _, r := range rs {
			r.CancelAt(now)
		}
	}
	var delay time.Duration
	if l.rpm != nil {
		r := l.rpm.ReserveN(now, 1)
		rs = append(rs, r)
		delay = max(delay, r.DelayFrom(now))
	}
	if l.tpm != nil && !rateRefused(ctx) {
		n := min(max(l.estimate(req), 0), l.tpm.Burst())
		r := l.tpm.ReserveN(now, n)
		rs = append(rs, r)
		delay = max(delay, r.DelayFrom(now))
	}
	if delay <= 0 {
		return nil
	}
	// Fail fast rather than wait for a budget that will arrive after the
	// caller has stopped listening.
	if dl, ok := ctx.Deadline(); ok && now.Add(delay).After(dl) {
		cancel()
		return fmt.Errorf("waiting %s for rate budget would pass the deadline: %w",
			delay.Round(time.Millisecond), context.DeadlineExceeded)
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		now = time.Now()
		cancel()
		return fmt.Errorf("waiting for rate budget: %w", ctx.Err())
	}
}
