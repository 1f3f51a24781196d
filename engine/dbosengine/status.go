package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/baton-dev/baton/engine/quota"
)

// Status is what a queue looks like in the database at one moment.
type Status struct {
	Queue string
	// Waiting items are enqueued and not started; Running ones are started
	// and not finished.
	Waiting, Running int
	// Finished is how many items finished (succeeded or failed) within
	// Window before the moment.
	Finished int
	Window   time.Duration
	// Workers are the executors with items running, or that finished
	// items within Window. DBOS v1.8.0 keeps no heartbeat of its own, so
	// a worker idle for longer than Window is not seen.
	Workers []Worker
	// The queue's limits as stored in its row: 0 or nil is no limit.
	WorkerConcurrency, GlobalConcurrency int
	RateLimit                            *RateLimit
	// Shared is the token budget and pause every process shares
	// (package quota).
	Shared quota.State
}

// Worker is one executor's share of a queue.
type Worker struct {
	ID                string
	Running, Finished int
}

// ErrNoQueue is ReadStatus on a queue no process registered.
var ErrNoQueue = errors.New("no such queue")

// ReadStatus reads the queue's status from the database at databaseURL,
// which must be migrated. It starts no work and changes nothing.
func ReadStatus(ctx context.Context, databaseURL, queue string, window time.Duration) (Status, error) {
	st := Status{Queue: queue, Window: window}
	c, err := dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: databaseURL, Logger: quiet})
	if err != nil {
		return st, fmt.Errorf("status: %w (has the database been migrated? baton engine migrate)", err)
	}
	defer c.Shutdown(c, 10*time.Second)
	q, err := dbos.RetrieveQueue(c, queue)
	if errors.Is(err, dbos.ErrQueueNotFound) {
		return st, fmt.Errorf("status: queue %q: %w", queue, ErrNoQueue)
	}
	if err != nil {
		return st, fmt.Errorf("status: queue %q: %w", queue, err)
	}
	if n := q.GetWorkerConcurrency(); n != nil {
		st.WorkerConcurrency = *n
	}
	if n := q.GetGlobalConcurrency(); n != nil {
		st.GlobalConcurrency = *n
	}
	if rl := q.GetRateLimit(); rl != nil {
		st.RateLimit = &RateLimit{Limit: rl.Limit, Period: rl.Period}
	}
	workers := map[string]*Worker{}
	worker := func(id string) *Worker {
		w := workers[id]
		if w == nil {
			w = &Worker{ID: id}
			workers[id] = w
		}
		return w
	}
	live, err := dbos.GetWorkflowAggregates(c, dbos.GetWorkflowAggregatesInput{
		GroupByStatus: true, GroupByExecutorID: true, SelectCount: true, QueueName: []string{queue},
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
			worker(str(r.Group["executor_id"])).Running += n
		}
	}
	done, err := dbos.GetWorkflowAggregates(c, dbos.GetWorkflowAggregatesInput{
		GroupByExecutorID: true, SelectCount: true, QueueName: []string{queue},
		Status:         []dbos.WorkflowStatusType{dbos.WorkflowStatusSuccess, dbos.WorkflowStatusError},
		CompletedAfter: time.Now().Add(-window),
	})
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	for _, r := range done {
		n := int(deref(r.Count))
		st.Finished += n
		worker(str(r.Group["executor_id"])).Finished += n
	}
	for _, w := range workers {
		st.Workers = append(st.Workers, *w)
	}
	sort.Slice(st.Workers, func(i, j int) bool { return st.Workers[i].ID < st.Workers[j].ID })
	if st.Shared, err = quota.ReadState(ctx, databaseURL, queue); err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	return st, nil
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
