package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

func init() { register(newWorkerCmd) }

type workerFlags struct {
	databaseURL string
	id          string
	concurrency int
	heartbeat   time.Duration
	deadAfter   time.Duration
	models      modelFlags
}

func newWorkerCmd() *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Take sub-agent calls from the dbos engine's queue and run them, until stopped",
		Long: `worker runs the sub-agent calls that baton ask --engine dbos enqueues, with
this machine's own provider keys (they never enter the database). It logs one
line per item and runs until SIGTERM or Ctrl-C.

--id names the worker in the database (its DBOS executor ID). Give each
worker slot a stable one: a worker that starts again with its id continues
the work it left unfinished, and a call whose response was recorded is not
sent again. Workers take only work enqueued under their own application
version (baton's version, or $BATON_APP_VERSION); work waiting under another
version is named on stderr and left alone.

--concurrency is how many items each worker runs at once. DBOS keeps it in
the queue's row, one for all the queue's workers: the last worker to start
sets it.

--rpm and --tpm are shared by every worker and kept in the database: --rpm
bounds item starts per minute over all workers (the queue's rate limit),
--tpm is one token budget per minute that every model call is charged
against before it is sent. The worker that gives one sets it for all; a
worker started without it keeps the one stored; 0 lifts it. A 429 from the
provider to any worker pauses every worker for its retry-after.

On SIGTERM the worker stops taking items; the items it was running are
released unfinished, to be continued when it starts again with its id.

Every worker (and every coordinating ask) records a heartbeat in the database
every --heartbeat. A worker whose last beat is older than --dead-after is taken
for dead, and a live worker adopts the work it left unfinished: its items are
put back on the queue and continue from their last recorded call. That happens
at most --dead-after plus --heartbeat after the dead worker's last beat (35 s
with the defaults). A worker that starts again with its id before then takes
its own work back instead.`,
		Example: `  baton engine migrate --database-url postgres://baton@db/baton
  ANTHROPIC_API_KEY=... baton worker --database-url postgres://baton@db/baton --id worker-1 --concurrency 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorker(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.databaseURL, "database-url", "", "PostgreSQL URL (default $BATON_DATABASE_URL)")
	fl.StringVar(&f.id, "id", "", "this worker's stable name in the database (default: the host name)")
	fl.IntVar(&f.concurrency, "concurrency", 4, "items this worker runs at once")
	fl.DurationVar(&f.heartbeat, "heartbeat", 5*time.Second, "how often this worker records that it is alive and looks for dead workers' items to adopt")
	fl.DurationVar(&f.deadAfter, "dead-after", 30*time.Second, "how old another worker's last heartbeat must be for its unfinished items to be adopted (at least three heartbeats)")
	f.models.register(fl)
	return cmd
}

func runWorker(cmd *cobra.Command, f workerFlags) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	switch {
	case f.concurrency < 1:
		return usageErrorf("--concurrency must be at least 1")
	case f.heartbeat <= 0:
		return usageErrorf("--heartbeat must be above 0")
	case f.deadAfter < 3*f.heartbeat:
		return usageErrorf("--dead-after %v must be at least three heartbeats (%v), so that a slow beat is not taken for a death", f.deadAfter, 3*f.heartbeat)
	}
	url, err := databaseURL(f.databaseURL)
	if err != nil {
		return err
	}
	if f.id == "" {
		if f.id, err = os.Hostname(); err != nil || f.id == "" {
			return usageErrorf("give --id: the host name is not known")
		}
	}
	shared, err := openSharedLimits(context.WithoutCancel(ctx), url, cmd.Flags(), &f.models)
	if err != nil {
		return err
	}
	defer shared.Close()
	model, _, err := f.models.resolve(ctx, f.concurrency, stderr)
	if err != nil {
		return err
	}
	log := &itemLog{w: stderr, id: f.id}
	version := appVersion()
	// Opened outside ctx: the signal that ends ctx must not cut the
	// engine's own connections before Close releases the items.
	d, err := openDistributed(context.WithoutCancel(ctx), url, dbosengine.Config{
		ExecutorID: f.id, WorkerConcurrency: f.concurrency, Heartbeat: f.heartbeat, DeadAfter: f.deadAfter, OnAdopt: log.adopted,
		RateLimit: shared.rate,
	}, model, log.wrap)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "baton worker %s: version %s, taking up to %d items at once from queue baton\n", f.id, version, f.concurrency)
	warned := map[string]bool{}
	// Waiting work of other versions is looked for every heartbeat, at
	// most once a second and at least every ten.
	tick := time.NewTicker(min(max(f.heartbeat, time.Second), 10*time.Second))
	defer tick.Stop()
	for {
		warnOtherVersions(ctx, stderr, url, f.id, version, warned)
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "baton worker %s: stopping; unfinished items are released to be continued\n", f.id)
			if err := d.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "baton worker %s: stopped\n", f.id)
			return nil
		case <-tick.C:
		}
	}
}

// warnOtherVersions names, once each, the application versions other than
// this worker's that have work waiting: that work is refused here.
func warnOtherVersions(ctx context.Context, w io.Writer, url, id, version string, warned map[string]bool) {
	waiting, err := dbosengine.WaitingByVersion(ctx, url, "baton")
	if err != nil {
		return
	}
	for v, n := range waiting {
		if v == version || warned[v] {
			continue
		}
		warned[v] = true
		fmt.Fprintf(w, "baton worker %s: refusing %d waiting items of version %q; this worker is version %q (start a worker of that version)\n", id, n, v, version)
	}
}

// itemLog writes one line per item a worker ran.
type itemLog struct {
	mu sync.Mutex
	w  io.Writer
	id string
}

// adopted is the line for a dead worker's items this worker put back on
// the queue.
func (l *itemLog) adopted(executor string, items []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(items) == 0 {
		fmt.Fprintf(l.w, "baton worker %s: %s's last heartbeat is too old; it left no unfinished items\n", l.id, executor)
		return
	}
	fmt.Fprintf(l.w, "baton worker %s: adopted %d unfinished items of %s, whose last heartbeat is too old\n", l.id, len(items), executor)
}

func (l *itemLog) wrap(task engine.Task) engine.Task {
	return func(ctx context.Context, input []byte) ([]byte, error) {
		var in orchestrate.SubagentInput
		_ = json.Unmarshal(input, &in)
		t0 := time.Now()
		out, err := task(ctx, input)
		took := time.Since(t0).Round(time.Millisecond)
		hash := in.RequestHash[:min(12, len(in.RequestHash))]
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			fmt.Fprintf(l.w, "baton worker %s: item %s (skill %s) failed after %v: %s\n", l.id, hash, in.Skill, took, oneLineErr(err))
			return out, err
		}
		var resp llm.Response
		_ = json.Unmarshal(out, &resp)
		fmt.Fprintf(l.w, "baton worker %s: item %s (skill %s) ok in %v, %d tokens in, %d out\n", l.id, hash, in.Skill, took, resp.Usage.InputTokens, resp.Usage.OutputTokens)
		return out, nil
	}
}
