package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// Defaults for the zero fields of a RetryPolicy.
const (
	DefaultMaxAttempts   = 5
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
)

// RetryPolicy says how often and how patiently a failed call is sent again.
// Zero fields take the Default* values above, so RetryPolicy{} is a sensible
// policy.
type RetryPolicy struct {
	// MaxAttempts bounds the number of calls, the first one included. 1 means
	// no retries.
	MaxAttempts int
	// BaseDelay is the backoff cap before the first retry; it doubles with
	// every further retry up to MaxDelay. The actual wait is drawn uniformly
	// from [0, cap] ("full jitter") so that sub-agents failing together do
	// not come back together.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps how long baton will honour a provider's retry-after.
	// A provider asking for longer (a quota reset hours away, say) ends the
	// retries at once with its error: waiting that long silently would look
	// like a hang.
	MaxRetryAfter time.Duration
	// OnRetry, when set, is called before each wait with the number of the
	// attempt that just failed (1-based), how long baton will wait and why.
	// It runs on the caller's goroutine and should return quickly.
	OnRetry func(attempt int, wait time.Duration, err error)
	// Sleep waits for d or until ctx is done, returning ctx.Err() in the
	// latter case. Nil means a real timer; tests inject their own so they
	// can assert waits without spending them.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	return p
}

// backoffCap is the upper bound of the jittered wait after the given failed
// attempt (1-based): BaseDelay·2^(attempt-1), capped at MaxDelay. p must have
// its defaults applied.
func (p RetryPolicy) backoffCap(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt; i++ {
		if d >= p.MaxDelay/2 {
			return p.MaxDelay
		}
		d *= 2
	}
	return min(d, p.MaxDelay)
}

// wait decides how long to wait after the given failed attempt. jitter
// returns a value in [0, n) and is rand.Int64N outside tests. A provider's
// retry-after wins over a shorter backoff, because retrying earlier than
// asked only earns another 429.
func (p RetryPolicy) wait(attempt int, retryAfter time.Duration, jitter func(n int64) int64) time.Duration {
	c := p.backoffCap(attempt)
	d := time.Duration(jitter(int64(c) + 1))
	return max(d, retryAfter)
}

// ErrRetryAfterTooLong is wrapped in the error returned when a provider asks
// for a wait longer than RetryPolicy.MaxRetryAfter.
var ErrRetryAfterTooLong = errors.New("provider asked to wait longer than baton is willing to")

// Retrying is a Model that sends a failed call again according to a
// RetryPolicy. Only a *ProviderError whose IsRetryable() is true is retried;
// anything else (a bad request, a cancelled context, an error baton made
// itself) is returned at once.
//
// Compose it outside the limits: WithRetry(WithLimits(provider, l), p). That
// way every attempt spends rate budget, and a concurrency slot is held only
// while a call is in flight, not while this policy sleeps on a backoff.
//
// The SDKs' own retries are switched off by the provider packages, so the
// attempt count in Response.Attempts and in errors is the whole truth.
type Retrying struct {
	m Model
	p RetryPolicy
}

// WithRetry wraps m with the retry policy p.
func WithRetry(m Model, p RetryPolicy) *Retrying {
	return &Retrying{m: m, p: p.withDefaults()}
}

// Generate calls the wrapped model until it succeeds, fails in a way that is
// not worth retrying, or runs out of attempts. The error after more than one
// attempt says how many were made and still unwraps to the provider's
// *ProviderError.
//
// When req.OnText is set, the attempts see a copy of req whose OnText notes
// that text arrived; an attempt after one that passed text on first calls
// req.OnRestart, so that the consumer knows the text starts again.
func (r *Retrying) Generate(ctx context.Context, req *Request) (*Response, error) {
	sent := req
	var streamed atomic.Bool
	if req != nil && req.OnText != nil {
		cp := *req
		onText := req.OnText
		cp.OnText = func(delta string) {
			streamed.Store(true)
			onText(delta)
		}
		sent = &cp
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 && streamed.Swap(false) && req.OnRestart != nil {
			req.OnRestart()
		}
		resp, err := r.m.Generate(ctx, sent)
		if err == nil {
			if resp != nil {
				resp.Attempts = attempt
			}
			return resp, nil
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return nil, attemptsErr(attempt, err)
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || !pe.IsRetryable() {
			return nil, attemptsErr(attempt, err)
		}
		if attempt >= r.p.MaxAttempts {
			return nil, fmt.Errorf("gave up after %s: %w", plural(attempt, "attempt"), err)
		}
		if pe.RetryAfter > r.p.MaxRetryAfter {
			return nil, fmt.Errorf("%s: %w (%s requested, limit %s): %w",
				plural(attempt, "attempt"), ErrRetryAfterTooLong, describeWait(pe.RetryAfter), r.p.MaxRetryAfter, err)
		}
		if pe.StatusCode == http.StatusTooManyRequests {
			// The provider refused this attempt before spending any of its
			// budget; the next attempt is paced by its retry-after (or the
			// backoff), so a token bucket beneath must not charge the same
			// request a second time (limit.go).
			ctx = context.WithValue(ctx, rateRefusedKey{}, true)
		}
		wait := r.p.wait(attempt, pe.RetryAfter, rand.Int64N)
		if r.p.OnRetry != nil {
			r.p.OnRetry(attempt, wait, err)
		}
		if fn := retryObserver(ctx); fn != nil {
			fn(attempt, wait, err)
		}
		if serr := r.p.Sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("waiting to retry after %s: %w (last error: %w)",
				plural(attempt, "attempt"), serr, err)
		}
	}
}

// attemptsErr leaves a first-attempt error as it is: "after 1 attempt" adds
// nothing a user needs.
func attemptsErr(attempt int, err error) error {
	if attempt == 1 {
		return err
	}
	return fmt.Errorf("after %d attempts: %w", attempt, err)
}

// describeWait prints a requested wait; one that does not fit a Duration
// (see ParseRetryAfter) would otherwise print as 2562047h47m16s.
func describeWait(d time.Duration) string {
	if d == retryAfterForever {
		return "an unbounded wait"
	}
	return d.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// sleepCtx waits for d unless ctx is done first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
