package dbosengine

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/pgtest"
)

// holdTasks is a task that reports its start and holds until release
// closes or its context ends.
func holdTasks(started chan<- string, release <-chan struct{}) engine.Tasks {
	return engine.Tasks{"hold": func(ctx context.Context, in []byte) ([]byte, error) {
		started <- string(in)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return in, nil
	}}
}

func waitStarted(t *testing.T, started <-chan string, n int) {
	t.Helper()
	for range n {
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("the items never started")
		}
	}
}

// TestStatusCountsWaitingRunningAndWorkers has a coordinator enqueue work
// that a worker that then stops holds (dead, still holding an item), and
// that a live worker of concurrency 2 runs two at a time with two more
// waiting; it reads the status, lets the live worker finish and reads it
// again.
func TestStatusCountsWaitingRunningAndWorkers(t *testing.T) {
	url := pgtest.Database(t)
	release := make(chan struct{})
	started := make(chan string, 8)
	open := func(cfg Config) *Engine {
		t.Helper()
		cfg.DatabaseURL, cfg.AppVersion = url, "test-1"
		// Beats every 200ms, and adoption only after a minute: the
		// stopped worker stays dead and unadopted while the test reads.
		cfg.Heartbeat, cfg.DeadAfter = 200*time.Millisecond, time.Minute
		e, err := Open(context.Background(), cfg, holdTasks(started, release))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	coord := open(Config{ExecutorID: "ask-1", EnqueueOnly: true, WorkerConcurrency: 1})
	defer coord.Close()
	// A baton run's own engine, under its own application and queue: it
	// takes no queue work, so it is not a worker.
	run := open(Config{ExecutorID: "run-1", AppName: "baton-run-1", Queue: "baton-run-1", Role: RoleRun})
	defer run.Close()
	fanout := func(ctx context.Context, ids ...string) chan []engine.Result {
		items := make([]engine.Item, len(ids))
		for i, id := range ids {
			items[i] = engine.Item{ID: id, Task: "hold", Input: []byte(id)}
		}
		res := make(chan []engine.Result, 1)
		go func() { res <- coord.FanOut(ctx, items) }()
		return res
	}
	gone := open(Config{ExecutorID: "worker-gone", WorkerConcurrency: 1})
	orphanCtx, cancelOrphan := context.WithCancel(context.Background())
	defer cancelOrphan()
	fanout(orphanCtx, "orphan")
	waitStarted(t, started, 1)
	// Closed while it runs the item: the item stays PENDING under it.
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()

	live := open(Config{ExecutorID: "worker-a", WorkerConcurrency: 2, RateLimit: &RateLimit{Limit: 100, Period: time.Minute}})
	defer live.Close()
	res := fanout(context.Background(), "s0", "s1", "s2", "s3")
	waitStarted(t, started, 2)
	time.Sleep(time.Until(stoppedAt.Add(1500 * time.Millisecond)))
	st, err := ReadStatusOf(context.Background(), url, StatusQuery{Queue: "baton", Window: time.Minute, DeadAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st.Running != 3 || st.Waiting != 2 {
		t.Errorf("while two run on worker-a and one is held by worker-gone: %d running, %d waiting, want 3 and 2", st.Running, st.Waiting)
	}
	host, _ := os.Hostname()
	if len(st.Workers) != 1 || st.Workers[0].ID != "worker-a" || st.Workers[0].Running != 2 || st.Workers[0].Host != host ||
		st.Workers[0].PID != os.Getpid() || st.Workers[0].Beat > time.Second || st.Workers[0].AppVersion != "test-1" {
		t.Errorf("live workers: %+v, want worker-a only, running 2, on this host and pid, beating", st.Workers)
	}
	if len(st.Coordinators) != 2 || st.Coordinators[0].ID != "ask-1" || st.Coordinators[0].Role != RoleCoordinator ||
		st.Coordinators[1].ID != "run-1" || st.Coordinators[1].Role != RoleRun {
		t.Errorf("coordinators: %+v, want ask-1 and run-1", st.Coordinators)
	}
	if len(st.Dead) != 1 || st.Dead[0].ID != "worker-gone" || st.Dead[0].Running != 1 || st.Dead[0].Beat < time.Second {
		t.Errorf("dead executors holding work: %+v, want worker-gone holding 1", st.Dead)
	}
	if st.WorkerConcurrency != 2 || st.RateLimit == nil || st.RateLimit.Limit != 100 || st.RateLimit.Period != time.Minute {
		t.Errorf("limits: %+v", st)
	}
	close(release)
	for i, r := range <-res {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	st, err = ReadStatusOf(context.Background(), url, StatusQuery{Queue: "baton", Window: 2 * time.Minute, DeadAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st.Running != 1 || st.Waiting != 0 || st.Finished != 4 || st.PerMinute != 2 {
		t.Errorf("after: %d running, %d waiting, %d finished, %.2f a minute; want 1, 0, 4, 2.00", st.Running, st.Waiting, st.Finished, st.PerMinute)
	}
	if len(st.Workers) != 1 || st.Workers[0].Finished != 4 || st.Workers[0].Running != 0 || len(st.Dead) != 1 {
		t.Errorf("after: workers %+v, dead %+v", st.Workers, st.Dead)
	}
	// With the default bound (30s) the stopped worker, whose beat is a
	// few seconds old, still counts as alive.
	st, err = ReadStatus(context.Background(), url, "baton", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workers) != 2 || len(st.Dead) != 0 || st.DeadAfter != 30*time.Second {
		t.Errorf("default bound: workers %+v, dead %+v, bound %v", st.Workers, st.Dead, st.DeadAfter)
	}
	if _, err := ReadStatus(context.Background(), url, "nope", time.Minute); !errors.Is(err, ErrNoQueue) {
		t.Errorf("unknown queue: %v", err)
	}
}
