package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/engine/quota"
)

// The roles an executor beats under in baton.executors.
const (
	RoleWorker      = "worker"
	RoleCoordinator = "coordinator"
	// RoleRun is a baton run's engine: it runs its own steps only.
	RoleRun = "run"
)

// Status is what a queue looks like in the database at one moment.
type Status struct {
	Queue string
	// Waiting items are enqueued and not started (the queue's depth);
	// Running ones are started and not finished (in flight).
	Waiting, Running int
	// Finished is how many items finished (succeeded or failed) within
	// Window before the moment, and PerMinute that as a rate.
	Finished  int
	Window    time.Duration
	PerMinute float64
	// DeadAfter is the heartbeat age past which an executor counts as
	// dead (the workers' --dead-after).
	DeadAfter time.Duration
	// Workers are the live executors of role worker: their last beat is
	// within DeadAfter. Coordinators are the live coordinating processes.
	Workers, Coordinators []Executor
	// Dead are the executors that still hold running items on the queue
	// but beat no longer (their beat is older than DeadAfter, or they
	// have no heartbeat row): a live worker of the same version adopts
	// their items within a heartbeat.
	Dead []Executor
	// The queue's limits as stored in its row: 0 or nil is no limit.
	WorkerConcurrency, GlobalConcurrency int
	RateLimit                            *RateLimit
	// Shared is the token budget and pause every process shares
	// (package quota).
	Shared quota.State
}

// Executor is one process's heartbeat and its share of a queue.
type Executor struct {
	ID, Role, AppVersion, Host string
	PID                        int
	// Beat is how long ago its last heartbeat was, by the database's
	// clock; Beating is false for an executor with no heartbeat row.
	Beat    time.Duration
	Beating bool
	// Running items on the queue now; Finished within the window.
	Running, Finished int
}

// ErrNoQueue is ReadStatus on a queue no process registered.
var ErrNoQueue = errors.New("no such queue")

// StatusQuery says what ReadStatusOf reads.
type StatusQuery struct {
	Queue string
	// Window is how far back finished items are counted.
	Window time.Duration
	// DeadAfter is the heartbeat age past which an executor is dead
	// (default 30s, the workers' default).
	DeadAfter time.Duration
}

// ReadStatus reads the queue's status from the database at databaseURL,
// which must be migrated, with the default DeadAfter. It starts no work and
// changes nothing.
func ReadStatus(ctx context.Context, databaseURL, queue string, window time.Duration) (Status, error) {
	return ReadStatusOf(ctx, databaseURL, StatusQuery{Queue: queue, Window: window})
}

// ReadStatusOf reads what q asks from the database at databaseURL.
func ReadStatusOf(ctx context.Context, databaseURL string, q StatusQuery) (Status, error) {
	if q.DeadAfter <= 0 {
		q.DeadAfter = defaultDeadAfter
	}
	st := Status{Queue: q.Queue, Window: q.Window, DeadAfter: q.DeadAfter}
	c, err := dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: databaseURL, Logger: quiet})
	if err != nil {
		return st, fmt.Errorf("status: %w (has the database been migrated? baton engine migrate)", err)
	}
	defer c.Shutdown(c, 10*time.Second)
	queue, err := dbos.RetrieveQueue(c, q.Queue)
	if errors.Is(err, dbos.ErrQueueNotFound) {
		return st, fmt.Errorf("status: queue %q: %w", q.Queue, ErrNoQueue)
	}
	if err != nil {
		return st, fmt.Errorf("status: queue %q: %w", q.Queue, err)
	}
	if n := queue.GetWorkerConcurrency(); n != nil {
		st.WorkerConcurrency = *n
	}
	if n := queue.GetGlobalConcurrency(); n != nil {
		st.GlobalConcurrency = *n
	}
	if rl := queue.GetRateLimit(); rl != nil {
		st.RateLimit = &RateLimit{Limit: rl.Limit, Period: rl.Period}
	}
	execs, err := readExecutors(ctx, databaseURL)
	if err != nil {
		return st, err
	}
	share := func(id string) *Executor {
		e := execs[id]
		if e == nil {
			e = &Executor{ID: id}
			execs[id] = e
		}
		return e
	}
	live, err := dbos.GetWorkflowAggregates(c, dbos.GetWorkflowAggregatesInput{
		GroupByStatus: true, GroupByExecutorID: true, SelectCount: true, QueueName: []string{q.Queue},
		Status: []dbos.WorkflowStatusType{dbos.WorkflowStatusEnqueued, dbos.WorkflowStatusPending},
	})
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	for _, r := range live {
		n := int(deref(r.Count))
		switch dbos.WorkflowStatusType(str(r.Group["status"])) {
		case dbos.WorkflowStatusEnqueued:
			st.Waiting += n
		case dbos.WorkflowStatusPending:
			st.Running += n
			share(str(r.Group["executor_id"])).Running += n
		}
	}
	done, err := dbos.GetWorkflowAggregates(c, dbos.GetWorkflowAggregatesInput{
		GroupByExecutorID: true, SelectCount: true, QueueName: []string{q.Queue},
		Status:         []dbos.WorkflowStatusType{dbos.WorkflowStatusSuccess, dbos.WorkflowStatusError},
		CompletedAfter: time.Now().Add(-q.Window),
	})
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	for _, r := range done {
		n := int(deref(r.Count))
		st.Finished += n
		share(str(r.Group["executor_id"])).Finished += n
	}
	if q.Window > 0 {
		st.PerMinute = float64(st.Finished) / q.Window.Minutes()
	}
	for _, e := range execs {
		alive := e.Beating && e.Beat <= q.DeadAfter
		switch {
		case alive && e.Role != RoleWorker:
			st.Coordinators = append(st.Coordinators, *e)
		case alive:
			st.Workers = append(st.Workers, *e)
		case e.Running > 0:
			st.Dead = append(st.Dead, *e)
		}
	}
	for _, list := range [][]Executor{st.Workers, st.Coordinators, st.Dead} {
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	}
	if st.Shared, err = quota.ReadState(ctx, databaseURL, q.Queue); err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	return st, nil
}

// readExecutors reads baton.executors, every beat's age by the database's
// clock (the one the beats were written by).
func readExecutors(ctx context.Context, databaseURL string) (map[string]*Executor, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT executor_id, role, app_version, host, pid,
		(extract(epoch FROM now() - beat_at) * 1000000)::bigint FROM baton.executors`)
	if err != nil {
		return nil, fmt.Errorf("status: read the heartbeats: %w (has the database been migrated? baton engine migrate)", err)
	}
	out := map[string]*Executor{}
	for rows.Next() {
		e := &Executor{Beating: true}
		var us int64
		if err := rows.Scan(&e.ID, &e.Role, &e.AppVersion, &e.Host, &e.PID, &us); err != nil {
			return nil, fmt.Errorf("status: read the heartbeats: %w", err)
		}
		e.Beat = time.Duration(us) * time.Microsecond
		out[e.ID] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("status: read the heartbeats: %w", err)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
