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
		url, queue string
		window     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a queue of the dbos engine: items waiting and running, workers seen, limits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := databaseURL(url)
			if err != nil {
				return err
			}
			if window <= 0 {
				return usageErrorf("--window must be above 0, not %v", window)
			}
			st, err := dbosengine.ReadStatus(cmd.Context(), u, queue, window)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), formatStatus(st))
			return err
		},
	}
	cmd.Flags().StringVar(&url, "database-url", "", "PostgreSQL URL (default $BATON_DATABASE_URL)")
	cmd.Flags().StringVar(&queue, "queue", "baton", "the queue to show")
	cmd.Flags().DurationVar(&window, "window", 5*time.Minute, "how far back finished items and workers are counted")
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
	s := fmt.Sprintf("queue %s: %d waiting, %d running, %d finished in the last %v\n", st.Queue, st.Waiting, st.Running, st.Finished, st.Window)
	s += fmt.Sprintf("limits: %s per worker, %s in all, rate %s\n", limit(st.WorkerConcurrency), limit(st.GlobalConcurrency), rate)
	s += formatShared(st.Shared)
	if len(st.Workers) == 0 {
		return s + fmt.Sprintf("workers seen in the last %v: none\n", st.Window)
	}
	s += fmt.Sprintf("workers seen in the last %v: %d\n", st.Window, len(st.Workers))
	for _, w := range st.Workers {
		s += fmt.Sprintf("  %s: %d running, %d finished\n", w.ID, w.Running, w.Finished)
	}
	return s
}
