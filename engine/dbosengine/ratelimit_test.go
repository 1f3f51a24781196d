package dbosengine

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/pgtest"
)

// TestRateLimitHoldsAcrossTwoEngines: one engine sets the queue's rate
// limit; a second engine on the same queue, opened after it with no limit of
// its own, keeps it rather than clearing it. Items fanned out to both start,
// in total over both, at most the limit in any window of the period, and
// both engines run some.
func TestRateLimitHoldsAcrossTwoEngines(t *testing.T) {
	const limit, n = 3, 9
	period := 2 * time.Second
	url := pgtest.Database(t)
	// Each item takes a second and each engine runs one at a time, so
	// that neither alone could start the limit in a window: the total
	// depends on both being bounded together.
	tasks := engine.Tasks{"slow": func(ctx context.Context, in []byte) ([]byte, error) {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return in, nil
	}}
	openEngine := func(id string, rl *RateLimit) *Engine {
		e, err := Open(context.Background(), Config{DatabaseURL: url, AppVersion: "test-1", ExecutorID: id,
			RateLimit: rl}, tasks)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	a := openEngine("rl-a", PerPeriod(limit, period))
	openEngine("rl-b", nil)
	var items []engine.Item
	for i := range n {
		items = append(items, engine.Item{ID: "rl-" + strconv.Itoa(i), Task: "slow"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for _, r := range a.FanOut(ctx, items) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	ws, err := dbos.ListWorkflows(a.dctx, dbos.WithFilterQueueName("baton"), dbos.WithFilterLoadInput(false), dbos.WithFilterLoadOutput(false))
	if err != nil {
		t.Fatal(err)
	}
	var starts []time.Time
	by := map[string]int{}
	for _, w := range ws {
		starts = append(starts, w.StartedAt)
		by[w.ExecutorID]++
	}
	if len(starts) != n {
		t.Fatalf("%d items on the queue, want %d", len(starts), n)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	for i := 0; i+limit < len(starts); i++ {
		if gap := starts[i+limit].Sub(starts[i]); gap < period {
			t.Errorf("starts %d to %d within %v: %d starts in one %v window, limit %d", i, i+limit, gap, limit+1, period, limit)
		}
	}
	if by["rl-a"] == 0 || by["rl-b"] == 0 {
		t.Errorf("items per engine %v, want both engines to run some", by)
	}
	t.Logf("items per engine %v; first to last start %v", by, starts[n-1].Sub(starts[0]).Round(time.Millisecond))
}

// TestRateLimitIsKeptOrLifted: an engine opened without a limit keeps the
// stored one; one opened with a zero limit lifts it.
func TestRateLimitIsKeptOrLifted(t *testing.T) {
	url := pgtest.Database(t)
	open := func(rl *RateLimit, global int) { openClosed(t, url, Config{RateLimit: rl, GlobalConcurrency: global}) }
	read := func() Status { return queueStatus(t, url) }
	open(PerPeriod(60, 0), 4)
	open(nil, 0)
	if st := read(); st.RateLimit == nil || *st.RateLimit != (RateLimit{Limit: 60, Period: time.Minute}) || st.GlobalConcurrency != 4 {
		t.Fatalf("after an engine without limits: rate %+v, global %d; want 60 per minute and 4 kept", st.RateLimit, st.GlobalConcurrency)
	}
	open(&RateLimit{}, -1)
	if st := read(); st.RateLimit != nil || st.GlobalConcurrency != 0 {
		t.Fatalf("after a lift: rate %+v, global %d; want none", st.RateLimit, st.GlobalConcurrency)
	}
}

// TestCoordinatorSetsRateKeepingWorkersConcurrency: a coordinator (ask
// --engine dbos --rpm) stores its rate limit for the workers and keeps the
// worker concurrency they set; one without a limit changes nothing.
func TestCoordinatorSetsRateKeepingWorkersConcurrency(t *testing.T) {
	url := pgtest.Database(t)
	open := func(cfg Config) { openClosed(t, url, cfg) }
	read := func() Status { return queueStatus(t, url) }
	open(Config{ExecutorID: "w", WorkerConcurrency: 3})
	open(Config{ExecutorID: "c1", EnqueueOnly: true})
	if st := read(); st.RateLimit != nil || st.WorkerConcurrency != 3 {
		t.Fatalf("after a coordinator without limits: rate %+v, concurrency %d; want none and 3", st.RateLimit, st.WorkerConcurrency)
	}
	open(Config{ExecutorID: "c2", EnqueueOnly: true, RateLimit: PerPeriod(7, 0)})
	if st := read(); st.RateLimit == nil || *st.RateLimit != (RateLimit{Limit: 7, Period: time.Minute}) || st.WorkerConcurrency != 3 {
		t.Fatalf("after a coordinator with --rpm 7: rate %+v, concurrency %d; want 7 per minute and 3 kept", st.RateLimit, st.WorkerConcurrency)
	}
}

// openClosed opens an engine on url with cfg (which registers the queue and
// its limits) and closes it.
func openClosed(t *testing.T, url string, cfg Config) {
	t.Helper()
	cfg.DatabaseURL, cfg.AppVersion = url, "test-1"
	tasks := engine.Tasks{"x": func(_ context.Context, in []byte) ([]byte, error) { return in, nil }}
	e, err := Open(context.Background(), cfg, tasks)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}

// queueStatus is the status of queue baton on url.
func queueStatus(t *testing.T, url string) Status {
	t.Helper()
	st, err := ReadStatus(context.Background(), url, "baton", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
