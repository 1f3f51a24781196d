package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/engine/dbosengine"
)

func init() { register(newEngineCmd) }

func newEngineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Manage the PostgreSQL database of the dbos engine",
		Long: `The dbos engine keeps baton's durable work (DBOS workflows and queues) in a
PostgreSQL database shared by every coordinator and worker. These commands
prepare that database and show what is in it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newEngineMigrateCmd(), newEngineStatusCmd())
	return cmd
}

// databaseURL is --database-url, else BATON_DATABASE_URL.
func databaseURL(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if u := os.Getenv("BATON_DATABASE_URL"); u != "" {
		return u, nil
	}
	return "", usageErrorf("no database: give --database-url URL or set BATON_DATABASE_URL")
}

func newEngineMigrateCmd() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create the database and the dbos engine's schema, or bring it up to date",
		Long: `migrate creates the database when it does not exist and the schema the dbos
engine keeps its work in. It is safe to run from several machines at once:
the migrations run one after the other under a lock in the database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := databaseURL(url)
			if err != nil {
				return err
			}
			if err := dbosengine.Migrate(cmd.Context(), u); err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "the database is ready for the dbos engine")
			return err
		},
	}
	cmd.Flags().StringVar(&url, "database-url", "", "PostgreSQL URL (default $BATON_DATABASE_URL)")
	return cmd
}

func newEngineStatusCmd() *cobra.Command {
	var (
		url, queue        string
		window, deadAfter time.Duration
		asJSON            bool
	)
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show a queue of the dbos engine: depth, items in flight, workers alive, throughput, limits",
		Long: `status reads the queue's state from the database and changes nothing: items
waiting (the queue's depth) and running (in flight), items finished in the
last --window and that as a rate, the workers and coordinating asks whose
heartbeat is within --dead-after (with host, pid, the age of their last beat,
their items running and finished), the workers that stopped beating while
still holding items (a live worker of the same version adopts those), and
the limits in force: items per worker, items in all, and the rate limit.

--dead-after should match the workers' own (default 30s for both).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := databaseURL(url)
			if err != nil {
				return err
			}
			if window <= 0 {
				return usageErrorf("--window must be above 0, not %v", window)
			}
			if deadAfter <= 0 {
				return usageErrorf("--dead-after must be above 0, not %v", deadAfter)
			}
			st, err := dbosengine.ReadStatusOf(cmd.Context(), u, dbosengine.StatusQuery{Queue: queue, Window: window, DeadAfter: deadAfter})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), statusView(st))
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), formatStatus(st))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&url, "database-url", "", "PostgreSQL URL (default $BATON_DATABASE_URL)")
	fl.StringVar(&queue, "queue", "baton", "the queue to show")
	fl.DurationVar(&window, "window", 5*time.Minute, "how far back finished items are counted")
	fl.DurationVar(&deadAfter, "dead-after", 30*time.Second, "how old a heartbeat must be for its process to count as dead (the workers' --dead-after)")
	fl.BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func formatStatus(st dbosengine.Status) string {
	limit := func(n int) string {
		if n <= 0 {
			return "none"
		}
		return fmt.Sprint(n)
	}
	rate := "none"
	if st.RateLimit != nil {
		rate = fmt.Sprintf("%d starts per %v", st.RateLimit.Limit, st.RateLimit.Period)
	}
	s := fmt.Sprintf("queue %s: %d waiting, %d running, %d finished in the last %v (%.1f a minute)\n",
		st.Queue, st.Waiting, st.Running, st.Finished, st.Window, st.PerMinute)
	s += fmt.Sprintf("limits: %s per worker, %s in all, rate %s\n", limit(st.WorkerConcurrency), limit(st.GlobalConcurrency), rate)
	s += formatShared(st.Shared)
	s += fmt.Sprintf("workers alive (a heartbeat within %v): %d\n", st.DeadAfter, len(st.Workers))
	for _, w := range st.Workers {
		s += "  " + formatExecutor(w) + fmt.Sprintf(", %d running, %d finished\n", w.Running, w.Finished)
	}
	if len(st.Coordinators) > 0 {
		s += fmt.Sprintf("asks and runs alive: %d\n", len(st.Coordinators))
		for _, c := range st.Coordinators {
			s += "  " + formatExecutor(c) + ", " + c.Role + "\n"
		}
	}
	if len(st.Dead) > 0 {
		s += fmt.Sprintf("dead, still holding items (a live worker of their version adopts them): %d\n", len(st.Dead))
		for _, d := range st.Dead {
			s += "  " + formatExecutor(d) + fmt.Sprintf(", %d running\n", d.Running)
		}
	}
	return s
}

func formatExecutor(e dbosengine.Executor) string {
	if !e.Beating {
		return e.ID + ": no heartbeat recorded"
	}
	return fmt.Sprintf("%s: %s pid %d, version %s, last beat %v ago", e.ID, e.Host, e.PID, e.AppVersion, e.Beat.Round(100*time.Millisecond))
}

// statusJSON is baton engine status --json: durations in seconds.
type statusJSON struct {
	Queue             string         `json:"queue"`
	Waiting           int            `json:"waiting"`
	Running           int            `json:"running"`
	Finished          int            `json:"finished"`
	WindowSeconds     float64        `json:"window_seconds"`
	PerMinute         float64        `json:"finished_per_minute"`
	DeadAfterSeconds  float64        `json:"dead_after_seconds"`
	Workers           []executorJSON `json:"workers"`
	Coordinators      []executorJSON `json:"coordinators"`
	Dead              []executorJSON `json:"dead_holding_items"`
	WorkerConcurrency int            `json:"worker_concurrency"`
	GlobalConcurrency int            `json:"global_concurrency"`
	RateLimit         *rateJSON      `json:"rate_limit"`
	// TokenBudget is the shared tokens-per-period budget (nil: none);
	// PausedSeconds the pause a 429 set that is still in force (0: none).
	TokenBudget   *budgetJSON `json:"token_budget"`
	PausedSeconds float64     `json:"paused_seconds"`
}

type budgetJSON struct {
	Tokens        int     `json:"tokens"`
	PeriodSeconds float64 `json:"period_seconds"`
	Charged       int     `json:"charged"`
}

type executorJSON struct {
	ID          string  `json:"id"`
	Role        string  `json:"role,omitempty"`
	AppVersion  string  `json:"app_version,omitempty"`
	Host        string  `json:"host,omitempty"`
	PID         int     `json:"pid,omitempty"`
	Beating     bool    `json:"beating"`
	BeatSeconds float64 `json:"last_beat_seconds_ago"`
	Running     int     `json:"running"`
	Finished    int     `json:"finished"`
}

type rateJSON struct {
	Limit         int     `json:"limit"`
	PeriodSeconds float64 `json:"period_seconds"`
}

func statusView(st dbosengine.Status) statusJSON {
	list := func(es []dbosengine.Executor) []executorJSON {
		out := []executorJSON{}
		for _, e := range es {
			out = append(out, executorJSON{ID: e.ID, Role: e.Role, AppVersion: e.AppVersion, Host: e.Host, PID: e.PID,
				Beating: e.Beating, BeatSeconds: e.Beat.Seconds(), Running: e.Running, Finished: e.Finished})
		}
		return out
	}
	v := statusJSON{Queue: st.Queue, Waiting: st.Waiting, Running: st.Running, Finished: st.Finished,
		WindowSeconds: st.Window.Seconds(), PerMinute: st.PerMinute, DeadAfterSeconds: st.DeadAfter.Seconds(),
		Workers: list(st.Workers), Coordinators: list(st.Coordinators), Dead: list(st.Dead),
		WorkerConcurrency: st.WorkerConcurrency, GlobalConcurrency: st.GlobalConcurrency}
	if st.RateLimit != nil {
		v.RateLimit = &rateJSON{Limit: st.RateLimit.Limit, PeriodSeconds: st.RateLimit.Period.Seconds()}
	}
	if sh := st.Shared; sh.TokensPerPeriod > 0 {
		v.TokenBudget = &budgetJSON{Tokens: sh.TokensPerPeriod, PeriodSeconds: sh.Period.Seconds(), Charged: sh.Charged}
	}
	v.PausedSeconds = st.Shared.PausedFor.Seconds()
	return v
}
