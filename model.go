package baton

import (
	"context"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/provider"
	"github.com/baton-dev/baton/telemetry"
)

// CallPolicy is how every model call of a run is made. The zero value is
// baton's default: five attempts with backoff on 408, 409, 429, 5xx and
// 529 (honouring retry-after), no rate limits and one call in flight.
type CallPolicy struct {
	// MaxAttempts bounds the attempts of one call, the first included;
	// 0 is llm.DefaultMaxAttempts.
	MaxAttempts int
	// Concurrency bounds the calls in flight at once; 0 is no bound.
	Concurrency int
	// RequestsPerMinute and TokensPerMinute limit the calls over time;
	// 0 leaves a limit off.
	RequestsPerMinute, TokensPerMinute int
	// OnRetry, when set, is told of every failed attempt that will be
	// retried, with the wait before the next one. It is called from
	// several goroutines at once.
	OnRetry func(attempt int, wait time.Duration, err error)
	// Shared, when set, wraps each attempt, inside its concurrency slot,
	// in limits shared with other processes (the dbos engine's); they
	// then replace RequestsPerMinute and TokensPerMinute.
	Shared func(llm.Model) llm.Model
}

// Stack wraps a provider's client in baton's call policy: the retry
// policy outside, the limits inside it, so that a call waiting on its
// backoff holds no concurrency slot and no rate budget, and each attempt
// inside the limits is an event on the call's trace span. The timeouts
// live in the provider's HTTP client (llm.NewHTTPClient), so they bound
// the exchange only: a call queued for a slot has not started and cannot
// time out. This is the one place baton builds its model stack.
func Stack(p llm.Model, pol CallPolicy) llm.Model {
	var m llm.Model = telemetry.Attempts(p)
	limits := llm.Limits{Concurrency: pol.Concurrency, RequestsPerMinute: pol.RequestsPerMinute, TokensPerMinute: pol.TokensPerMinute}
	if pol.Shared != nil {
		m, limits.RequestsPerMinute, limits.TokensPerMinute = pol.Shared(m), 0, 0
	}
	m = llm.WithLimits(m, limits)
	return llm.WithRetry(m, llm.RetryPolicy{MaxAttempts: pol.MaxAttempts, OnRetry: pol.OnRetry})
}

// ModelOptions choose a provider. Empty fields leave the choice to the
// environment: ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or an
// Ollama server at OLLAMA_HOST.
type ModelOptions struct {
	Provider string // "anthropic", "openai", "ollama" or "" to detect
	Model    string // "" for the provider's default
	BaseURL  string
	// Window is the context window asked for, in tokens (0: the model's
	// known one); Ollama is told to run every request with it.
	Window int
	// CallTimeout bounds one attempt's HTTP exchange and IdleTimeout the
	// silence of a streamed response: 0 is baton's default
	// (llm.DefaultCallTimeout, llm.DefaultIdleTimeout), negative no limit.
	CallTimeout, IdleTimeout time.Duration
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
}

// NewModel resolves the provider and wraps it with Stack. The selection
// names the provider and model chosen, and holds the redactor that masks
// the API key in every error quoted.
func NewModel(ctx context.Context, o ModelOptions, pol CallPolicy) (llm.Model, *provider.Selection, error) {
	sel, err := provider.Resolve(ctx, provider.Options{Provider: o.Provider, Model: o.Model, BaseURL: o.BaseURL,
		HTTPClient: llm.NewHTTPClient(timeout(o.CallTimeout, llm.DefaultCallTimeout), timeout(o.IdleTimeout, llm.DefaultIdleTimeout)),
		Window:     o.Window}, getenvOr(o.Getenv))
	if err != nil {
		// The provider package's errors already name what to set.
		return nil, nil, err
	}
	return Stack(sel.LLM, pol), sel, nil
}

// timeout maps an option onto llm.NewHTTPClient's: 0 is the default,
// negative is off (which the client takes as 0).
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
