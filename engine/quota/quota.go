// Package quota keeps the limits that every baton process on one
// PostgreSQL database shares besides the queue's own: a budget of tokens
// per period that each model call is charged before it is sent, and a
// pause that a provider's 429 sets for all (no process sends a call until
// it has passed).
//
// The budget is a sliding window, as providers meter tokens per minute:
// a call goes out only when the tokens charged in the last period, its
// own included, stay within the budget. Charges are rows of
// baton.quota_charge; the budget's row in baton.quota is locked while a
// charge is decided, so two processes never both spend the last tokens.
// Every time is the database's clock, so the processes' clocks need not
// agree.
package quota

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DDL creates the budget's tables in baton's schema. The dbos engine's
// Migrate runs it under its advisory lock.
const DDL = `CREATE SCHEMA IF NOT EXISTS baton;
CREATE TABLE IF NOT EXISTS baton.quota (
	name              text PRIMARY KEY,
	tokens_per_period bigint NOT NULL DEFAULT 0,
	period_ms         bigint NOT NULL DEFAULT 60000,
	paused_until      timestamptz
);
CREATE TABLE IF NOT EXISTS baton.quota_charge (
	id     bigserial PRIMARY KEY,
	name   text NOT NULL,
	at     timestamptz NOT NULL,
	tokens bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS quota_charge_name_at ON baton.quota_charge (name, at)`

// ErrNotMigrated is returned when the database has no budget tables.
var ErrNotMigrated = errors.New("the database has no shared budget tables (baton engine migrate)")

// Budget is one named budget and pause in the database.
type Budget struct {
	pool *pgxpool.Pool
	name string
}

// Open connects to the database at url and makes sure the budget's row
// exists (with no token limit when it is new). The tables must exist
// (Migrate of the dbos engine creates them).
func Open(ctx context.Context, url, name string) (*Budget, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("shared budget: %w", err)
	}
	b := &Budget{pool: pool, name: name}
	if _, err := pool.Exec(ctx, `INSERT INTO baton.quota (name) VALUES ($1) ON CONFLICT DO NOTHING`, name); err != nil {
		pool.Close()
		return nil, fmt.Errorf("shared budget %q: %w", name, notMigrated(err))
	}
	return b, nil
}

// Close closes the budget's connections.
func (b *Budget) Close() { b.pool.Close() }

// SetSize stores the budget for every process: tokens per period. tokens
// 0 or below lifts the token limit (the pause still applies). A process
// that does not call it keeps the size stored.
func (b *Budget) SetSize(ctx context.Context, tokens int, period time.Duration) error {
	if period <= 0 {
		period = time.Minute
	}
	_, err := b.pool.Exec(ctx, `UPDATE baton.quota SET tokens_per_period = $2, period_ms = $3 WHERE name = $1`,
		b.name, max(tokens, 0), period.Milliseconds())
	if err != nil {
		return fmt.Errorf("shared budget %q: set its size: %w", b.name, err)
	}
	return nil
}

// State is a budget as stored at one moment.
type State struct {
	// TokensPerPeriod is the budget (0: no token limit) and Period its
	// window.
	TokensPerPeriod int
	Period          time.Duration
	// Charged is the tokens charged in the last Period.
	Charged int
	// PausedFor is how long the pause in force has still to run (0: none).
	PausedFor time.Duration
}

// Read reads the budget's state.
func (b *Budget) Read(ctx context.Context) (State, error) {
	var st State
	var periodMS int64
	var paused float64
	err := b.pool.QueryRow(ctx, `SELECT q.tokens_per_period, q.period_ms,
		GREATEST(0, COALESCE(EXTRACT(EPOCH FROM q.paused_until - clock_timestamp()), 0))::float8,
		(SELECT COALESCE(sum(c.tokens), 0) FROM baton.quota_charge c
			WHERE c.name = q.name AND c.at > clock_timestamp() - q.period_ms * interval '1 millisecond')
		FROM baton.quota q WHERE q.name = $1`, b.name).Scan(&st.TokensPerPeriod, &periodMS, &paused, &st.Charged)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("shared budget %q: %w", b.name, notMigrated(err))
	}
	st.Period = time.Duration(periodMS) * time.Millisecond
	st.PausedFor = time.Duration(paused * float64(time.Second))
	return st, nil
}

// ReadState reads the named budget's state from the database at url
// without creating anything: a database migrated before the budget
// existed reads as no budget and no pause.
func ReadState(ctx context.Context, url, name string) (State, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return State{}, fmt.Errorf("shared budget: %w", err)
	}
	defer pool.Close()
	st, err := (&Budget{pool: pool, name: name}).Read(ctx)
	if errors.Is(err, ErrNotMigrated) {
		return State{}, nil
	}
	return st, err
}

// Pause records that no process may send a call for d from now (the
// database's now). A longer pause already in force is kept.
func (b *Budget) Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	_, err := b.pool.Exec(ctx, `UPDATE baton.quota SET paused_until =
		GREATEST(COALESCE(paused_until, '-infinity'), clock_timestamp() + $2 * interval '1 microsecond') WHERE name = $1`,
		b.name, d.Microseconds())
	if err != nil {
		return fmt.Errorf("shared budget %q: record a pause: %w", b.name, err)
	}
	return nil
}

// Charge is what one call was charged; Settle corrects it.
type Charge struct {
	id     int64
	tokens int
	// At is when it was charged, by the database's clock (zero when
	// there is no token limit).
	At time.Time
}

// Tokens is how many tokens were charged.
func (c Charge) Tokens() int { return c.tokens }

// Take waits until no pause is in force and the budget has room for n
// tokens, then charges them, all honouring ctx. Calls are served in the
// order they asked, across processes: each is charged at once, at the
// first moment it fits after the charges before it (a reservation), and
// waits for that moment, so a large request is not starved by small ones.
// A call of more tokens than the whole budget is charged the whole budget:
// it goes out once the window is empty, and the provider, which knows its
// real limits, decides. With no token limit Take only waits out a pause.
func (b *Budget) Take(ctx context.Context, n int) (Charge, error) {
	for {
		c, wait, err := b.try(ctx, max(n, 0))
		if err != nil {
			return Charge{}, err
		}
		if wait <= 0 {
			return c, nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			b.cancel(ctx, c)
			return Charge{}, fmt.Errorf("waiting %v for the shared budget would pass the deadline: %w",
				wait.Round(time.Millisecond), context.DeadlineExceeded)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			b.cancel(ctx, c)
			return Charge{}, fmt.Errorf("waiting for the shared budget: %w", ctx.Err())
		}
		if c.id == 0 {
			continue // a pause passed: ask again
		}
		// A pause set while this call waited for its turn holds it too;
		// it gives its turn back and asks again once the pause is over.
		left, err := b.pausedFor(ctx)
		if err != nil {
			b.cancel(ctx, c)
			return Charge{}, err
		}
		if left <= 0 {
			return c, nil
		}
		b.cancel(ctx, c)
	}
}

// cancel takes back a reservation that will not be sent.
func (b *Budget) cancel(ctx context.Context, c Charge) {
	if c.id != 0 {
		// Best effort: a charge left behind only makes the window
		// stricter until it leaves it.
		_, _ = b.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM baton.quota_charge WHERE id = $1`, c.id)
	}
}

func (b *Budget) pausedFor(ctx context.Context) (time.Duration, error) {
	var left float64
	err := b.pool.QueryRow(ctx, `SELECT GREATEST(0, COALESCE(EXTRACT(EPOCH FROM paused_until - clock_timestamp()), 0))::float8
		FROM baton.quota WHERE name = $1`, b.name).Scan(&left)
	if err != nil {
		return 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	return time.Duration(left * float64(time.Second)), nil
}

// try waits for nothing: under the budget's row lock, it either charges n
// tokens now, or reserves them at the first moment they fit after every
// charge already made (and says how long until then), or, while a pause
// is in force, charges nothing and says how long it has to run.
func (b *Budget) try(ctx context.Context, n int) (Charge, time.Duration, error) {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var limit, periodMS int64
	var paused *time.Time
	err = tx.QueryRow(ctx, `SELECT tokens_per_period, period_ms, paused_until FROM baton.quota WHERE name = $1 FOR UPDATE`,
		b.name).Scan(&limit, &periodMS, &paused)
	if err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, notMigrated(err))
	}
	// Read after the lock is held: a clock read before it could be older
	// than the charges of the process that held it.
	var now time.Time
	if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	if paused != nil && paused.After(now) {
		return Charge{}, paused.Sub(now), nil
	}
	if limit <= 0 {
		return Charge{}, 0, nil
	}
	period := time.Duration(periodMS) * time.Millisecond
	n = min(n, int(limit))
	// The charges that can share a window with this one: every charge
	// is at or before the time this one is given, so those older than a
	// period before now are past.
	rows, err := tx.Query(ctx, `SELECT at, tokens FROM baton.quota_charge WHERE name = $1 AND at > $2 ORDER BY at, id`,
		b.name, now.Add(-period))
	if err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	type charge struct {
		at     time.Time
		tokens int64
	}
	var window []charge
	for rows.Next() {
		var c charge
		if err := rows.Scan(&c.at, &c.tokens); err != nil {
			rows.Close()
			return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
		}
		window = append(window, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	at := fitAt(now, period, limit, int64(n), func(yield func(time.Time, int64) bool) {
		for _, c := range window {
			if !yield(c.at, c.tokens) {
				return
			}
		}
	})
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO baton.quota_charge (name, at, tokens) VALUES ($1, $2, $3) RETURNING id`,
		b.name, at, n).Scan(&id); err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: charge: %w", b.name, err)
	}
	// Charges that left the window matter no more.
	if _, err := tx.Exec(ctx, `DELETE FROM baton.quota_charge WHERE name = $1 AND at <= $2`, b.name, now.Add(-period)); err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: %w", b.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Charge{}, 0, fmt.Errorf("shared budget %q: charge: %w", b.name, err)
	}
	return Charge{id: id, tokens: n, At: at}, at.Sub(now), nil
}

// fitAt is the first moment, no earlier than now nor than the last charge,
// at which n more tokens keep every window of the period within limit,
// given the charges (oldest first, none a period or more before now).
// Only the window ending at that moment needs checking: the windows ending
// earlier held within limit already, and no charge comes after it.
func fitAt(now time.Time, period time.Duration, limit, n int64, charges func(yield func(time.Time, int64) bool)) time.Time {
	type c struct {
		at     time.Time
		tokens int64
	}
	var cs []c
	var sum int64
	t := now
	for at, tokens := range charges {
		cs = append(cs, c{at, tokens})
		sum += tokens
		if at.After(t) {
			t = at
		}
	}
	// Drop the oldest charges until n fits; the window then starts just
	// after the last one dropped, so the charge goes a period after it
	// (plus a microsecond, the window's start being exclusive).
	for i := 0; sum+n > limit && i < len(cs); i++ {
		sum -= cs[i].tokens
		if end := cs[i].at.Add(period + time.Microsecond); end.After(t) {
			t = end
		}
	}
	return t
}

// Settle lowers a charge to the tokens the call really spent (never
// raises it: the window already let later calls go on the estimate).
func (b *Budget) Settle(ctx context.Context, c Charge, spent int) error {
	if c.id == 0 || spent >= c.tokens {
		return nil
	}
	_, err := b.pool.Exec(ctx, `UPDATE baton.quota_charge SET tokens = $2 WHERE id = $1`, c.id, max(spent, 0))
	if err != nil {
		return fmt.Errorf("shared budget %q: settle a charge: %w", b.name, err)
	}
	return nil
}

// notMigrated names a missing table as ErrNotMigrated.
func notMigrated(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000") { // undefined_table, invalid_schema_name
		return fmt.Errorf("%w: %w", ErrNotMigrated, err)
	}
	return err
}
