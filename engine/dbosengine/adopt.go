package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Adoption of a dead executor's work.
//
// Open-source DBOS recovers PENDING work only at Launch and only for the
// launching process's own executor ID: a worker that dies and never comes
// back leaves its items PENDING for ever. So every open Engine writes a
// heartbeat row in baton's own table (baton.executors, next to DBOS's schema
// in the same database) every Heartbeat, and on each beat looks for
// executors of the same application and version whose beat is older than
// DeadAfter. It takes each such row under a row lock (SELECT ... FOR UPDATE
// SKIP LOCKED, so live engines never wait on each other), finds the dead
// executor's PENDING workflows with DBOS's public ListWorkflows, re-enqueues
// them with ResumeWorkflows (on the queue they came from, or DBOS's internal
// queue for a Run), and deletes the row in the same transaction. Two live
// engines therefore never adopt the same executor: the second either skips
// the locked row or, after the commit, no longer finds it; and a workflow
// already resumed is ENQUEUED or owned by its new executor, so it is not
// listed again. DBOS itself refuses step writes from an execution that no
// longer owns a workflow, which covers a "dead" executor that was only
// paused.
//
// The bound: an executor's work is re-enqueued at most DeadAfter + Heartbeat
// after its last beat (the beat goes stale after DeadAfter; a live engine
// looks on its next beat), and starts within the queue's poll interval
// after that, limits allowing. With the defaults (5 s, 30 s, 100 ms) that is
// 35.1 s. DeadAfter must be well above Heartbeat, so that a slow beat
// (a busy database, a paused machine) does not read as a death.
//
// A worker that restarts with its own ID recovers its own work at Launch
// (DBOS does that), and its beat makes its row live again.

const (
	defaultHeartbeat = 5 * time.Second
	defaultDeadAfter = 30 * time.Second
)

// executorsDDL is baton's table of executor heartbeats, created by Migrate.
const executorsDDL = `CREATE SCHEMA IF NOT EXISTS baton;
CREATE TABLE IF NOT EXISTS baton.executors (
	executor_id text PRIMARY KEY,
	app_name    text NOT NULL,
	app_version text NOT NULL,
	host        text NOT NULL,
	pid         integer NOT NULL,
	started_at  timestamptz NOT NULL DEFAULT now(),
	beat_at     timestamptz NOT NULL
);
ALTER TABLE baton.executors ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT 'worker'`

// heart beats for one Engine and adopts dead executors' work.
type heart struct {
	pool                    *pgxpool.Pool
	dctx                    dbos.Context
	id, appName, appVersion string
	// role is "worker", or "coordinator" for an engine that only
	// enqueues: baton engine status counts the workers apart.
	role             string
	every, deadAfter time.Duration
	onAdopt          func(executor string, ids []string)
	done             chan struct{}
}

// beat records that this executor is alive, now by the database's clock
// (all engines compare beats by one clock, whatever their own say).
func (h *heart) beat(ctx context.Context) error {
	host, _ := os.Hostname()
	_, err := h.pool.Exec(ctx, `INSERT INTO baton.executors (executor_id, app_name, app_version, host, pid, role, beat_at)
		VALUES ($1, $2, $3, $4, $5, $6, now())
		ON CONFLICT (executor_id) DO UPDATE SET app_name = $2, app_version = $3, host = $4, pid = $5, role = $6, beat_at = now()`,
		h.id, h.appName, h.appVersion, host, os.Getpid(), h.role)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// run beats and adopts every h.every until stop ends.
func (h *heart) run(stop context.Context) {
	defer close(h.done)
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
		// Errors are retried on the next beat: a database that is away
		// for a while makes this engine look dead, and its work is then
		// adopted by another, which DBOS keeps safe.
		if h.beat(stop) == nil {
			h.adopt(stop)
		}
	}
}

// adopt re-enqueues the PENDING work of every dead executor it can lock,
// one executor per transaction.
func (h *heart) adopt(ctx context.Context) {
	for {
		ok, err := h.adoptOne(ctx)
		if err != nil || !ok {
			return
		}
	}
}

// adoptOne adopts one dead executor's work, reporting whether it found one.
func (h *heart) adoptOne(ctx context.Context) (bool, error) {
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.Background())
	var dead string
	err = tx.QueryRow(ctx, `SELECT executor_id FROM baton.executors
		WHERE app_name = $1 AND app_version = $2 AND executor_id <> $3 AND beat_at < now() - $4::interval
		ORDER BY beat_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
		h.appName, h.appVersion, h.id, fmt.Sprintf("%d microseconds", h.deadAfter.Microseconds())).Scan(&dead)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ids, err := h.resume(dead)
	if err != nil {
		return false, fmt.Errorf("adopt %q: %w", dead, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM baton.executors WHERE executor_id = $1`, dead); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	if h.onAdopt != nil {
		h.onAdopt(dead, ids)
	}
	return true, nil
}

// resume re-enqueues the dead executor's PENDING workflows of this
// application version, each on the queue it came from.
func (h *heart) resume(dead string) ([]string, error) {
	ws, err := dbos.ListWorkflows(h.dctx, dbos.WithFilterExecutorIDs(dead), dbos.WithFilterStatus(dbos.WorkflowStatusPending),
		dbos.WithFilterAppVersion(h.appVersion), dbos.WithFilterLoadInput(false), dbos.WithFilterLoadOutput(false))
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	byQueue := map[string][]string{}
	var ids []string
	for _, w := range ws {
		byQueue[w.QueueName] = append(byQueue[w.QueueName], w.ID)
		ids = append(ids, w.ID)
	}
	for q, qids := range byQueue {
		var opts []dbos.ResumeWorkflowOption
		if q != "" {
			opts = append(opts, dbos.WithResumeQueue(q))
		}
		if _, err := dbos.ResumeWorkflows[[]byte](h.dctx, qids, opts...); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	return ids, nil
}

// LiveWorkers names the other executors of role worker, of this engine's
// application and version, whose last beat is within the dead-after bound:
// the processes that can take the work this one enqueues.
func (e *Engine) LiveWorkers(ctx context.Context) ([]string, error) {
	h := e.heart
	rows, err := h.pool.Query(ctx, `SELECT executor_id FROM baton.executors
		WHERE app_name = $1 AND app_version = $2 AND executor_id <> $3 AND role = $4 AND beat_at >= now() - $5::interval
		ORDER BY executor_id`,
		h.appName, h.appVersion, h.id, RoleWorker, fmt.Sprintf("%d microseconds", h.deadAfter.Microseconds()))
	if err != nil {
		return nil, fmt.Errorf("live workers: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("live workers: %w", err)
	}
	return ids, nil
}
