package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/engine/quota"
	"github.com/baton-dev/baton/llm"
)

// envTestLimitPeriod shortens the minute of --rpm and --tpm under the dbos
// engine, for tests only (a Go duration such as 2s), so that a test of the
// shared limits finishes in seconds. It is not documented to users.
const envTestLimitPeriod = "BATON_TEST_LIMIT_PERIOD"

// budgetName is the shared budget's row: one per queue, and baton uses one
// queue.
const budgetName = "baton"

// limitPeriod is the period --rpm and --tpm count over: a minute.
func limitPeriod() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(envTestLimitPeriod)); err == nil && d > 0 {
		return d
	}
	return time.Minute
}

// sharedLimits are the limits a process on the dbos engine shares with all
// the others: --rpm is the queue's rate limit (item starts per minute over
// every worker), --tpm the shared token budget, and a 429 pauses every
// process. A flag given sets the limit for all (0 lifts it); a flag not
// given keeps the one stored, set by whichever process gave it last.
type sharedLimits struct {
	budget *quota.Budget
	rate   *dbosengine.RateLimit
}

// openSharedLimits migrates the database (the budget's tables are baton's),
// opens the budget, stores the --tpm given, and points the model flags at
// the shared limits instead of the process's own.
func openSharedLimits(ctx context.Context, url string, fl *pflag.FlagSet, m *modelFlags) (*sharedLimits, error) {
	if err := dbosengine.Migrate(ctx, url); err != nil {
		return nil, fmt.Errorf("dbos engine: %w", err)
	}
	b, err := quota.Open(ctx, url, budgetName)
	if err != nil {
		return nil, err
	}
	period := limitPeriod()
	if fl.Changed("tpm") {
		if err := b.SetSize(ctx, m.tpm, period); err != nil {
			b.Close()
			return nil, err
		}
	}
	s := &sharedLimits{budget: b}
	if fl.Changed("rpm") {
		// A limit of 0 is stored as none: dbosengine lifts it.
		s.rate = dbosengine.PerPeriod(max(m.rpm, 0), period)
	}
	m.shared = func(inner llm.Model) llm.Model { return quota.NewModel(inner, b, quota.Options{}) }
	return s, nil
}

func (s *sharedLimits) Close() { s.budget.Close() }

// formatShared is the status lines of the shared token budget and pause.
func formatShared(st quota.State) string {
	s := "token budget: none\n"
	if st.TokensPerPeriod > 0 {
		s = fmt.Sprintf("token budget: %d tokens per %v, %d charged in the last %v\n", st.TokensPerPeriod, st.Period, st.Charged, st.Period)
	}
	if st.PausedFor > 0 {
		s += fmt.Sprintf("paused after a 429: no calls for %v more\n", st.PausedFor.Round(time.Millisecond))
	}
	return s
}
