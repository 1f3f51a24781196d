package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/provider"
)

// modelFlags are the provider and call-policy flags every command that
// calls a model shares.
type modelFlags struct {
	provider    string
	model       string
	baseURL     string
	rpm, tpm    int
	maxAttempts int
	// callTimeout and idleTimeout bound each attempt's HTTP exchange and
	// the silence of a streamed response; 0 turns one off.
	callTimeout, idleTimeout time.Duration
	// onRetry, when set, receives every retry notice instead of stderr:
	// baton run shows them on its progress display, naming the step.
	onRetry func(attempt int, wait time.Duration, err error)
	// window is the --window of a command that has one: Ollama is told
	// to run every request with it (provider.Options.Window).
	window int
	// shared, when set, wraps each attempt in the limits shared with the
	// other processes of the dbos engine (shared_limits.go), which then
	// replace --rpm and --tpm within this process.
	shared func(llm.Model) llm.Model
}

func (m *modelFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&m.provider, "provider", "", "provider: anthropic, openai (any OpenAI-compatible server) or ollama; default from the environment")
	fl.StringVar(&m.model, "model", "", "model name (default: the provider's default)")
	fl.StringVar(&m.baseURL, "base-url", "", "provider endpoint (default: ANTHROPIC_BASE_URL / OPENAI_BASE_URL / OLLAMA_HOST)")
	fl.IntVar(&m.rpm, "rpm", 0, "requests per minute limit (0: none); with the dbos engine, item starts per minute over all workers, stored in the database: the last process to give it sets it for all")
	fl.IntVar(&m.tpm, "tpm", 0, "tokens per minute limit (0: none); with the dbos engine, a budget shared by all workers and stored in the database: the last process to give it sets it for all")
	fl.IntVar(&m.maxAttempts, "max-attempts", 5, "attempts per model call, retries included")
	fl.DurationVar(&m.callTimeout, "call-timeout", llm.DefaultCallTimeout, "longest one attempt of a model call may take before it is abandoned and retried (0: no limit)")
	fl.DurationVar(&m.idleTimeout, "idle-timeout", llm.DefaultIdleTimeout, "longest a streamed response may send no event before it is abandoned and retried; keep-alive comments do not count (0: no limit)")
}

// check refuses the call-policy flags that cannot be run.
func (m *modelFlags) check() error {
	if m.maxAttempts < 1 {
		return usageErrorf("--max-attempts must be at least 1")
	}
	if m.callTimeout < 0 || m.idleTimeout < 0 {
		return usageErrorf("--call-timeout and --idle-timeout must not be negative")
	}
	return nil
}

// options are the provider flags as baton.NewModel takes them; a timeout
// flag of 0 is no limit, which the library spells as negative.
func (m *modelFlags) options() baton.ModelOptions {
	off := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return baton.ModelOptions{Provider: m.provider, Model: m.model, BaseURL: m.baseURL, Window: m.window,
		CallTimeout: off(m.callTimeout), IdleTimeout: off(m.idleTimeout)}
}

// policy is the call policy of the flags: retry notices go to onRetry
// when set, else to stderr unless it is a terminal (where a progress
// display owns the screen).
func (m *modelFlags) policy(concurrency int, stderr io.Writer) baton.CallPolicy {
	// Parallel sub-agents retry at the same time; the lock keeps their
	// notices whole lines and keeps a non-file stderr (a buffer, a pipe
	// wrapper) from being written by two goroutines at once.
	var mu sync.Mutex
	onRetry := m.onRetry
	return baton.CallPolicy{MaxAttempts: m.maxAttempts, Concurrency: concurrency,
		RequestsPerMinute: m.rpm, TokensPerMinute: m.tpm, Shared: m.shared,
		OnRetry: func(attempt int, wait time.Duration, err error) {
			if onRetry != nil {
				onRetry(attempt, wait, err)
				return
			}
			if !isTerminal(stderr) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintf(stderr, "baton: attempt %d failed (%s); retrying in %s\n", attempt, oneLineErr(err), wait.Round(time.Millisecond))
			}
		}}
}

// resolve picks the provider and wraps it in baton's one model stack
// (baton.Stack).
func (m *modelFlags) resolve(ctx context.Context, concurrency int, stderr io.Writer) (llm.Model, *provider.Selection, error) {
	if err := m.check(); err != nil {
		return nil, nil, err
	}
	return baton.NewModel(ctx, m.options(), m.policy(concurrency, stderr))
}
