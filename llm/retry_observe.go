package llm

import (
	"context"
	"time"
)

type retryObserverKey struct{}

// WithRetryObserver returns ctx carrying fn, which a Retrying model calls
// with every retry of a call made with that context, just after
// RetryPolicy.OnRetry and with the same arguments. OnRetry is one callback
// for every call of a policy; the observer lets the code that made one call
// learn of that call's own retries and waits (a run record's timeline).
// It runs on the caller's goroutine and should return quickly.
func WithRetryObserver(ctx context.Context, fn func(attempt int, wait time.Duration, err error)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, fn)
}

func retryObserver(ctx context.Context) func(int, time.Duration, error) {
	fn, _ := ctx.Value(retryObserverKey{}).(func(int, time.Duration, error))
	return fn
}
