package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/pgtest"
)

// TestStatusCountsWaitingRunningAndWorkers holds two items running on a
// queue of worker concurrency 2 with two more waiting, reads the status,
// then lets them finish and reads it again.
func TestStatusCountsWaitingRunningAndWorkers(t *testing.T) {
	url := pgtest.Database(t)
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	tasks := engine.Tasks{"hold": func(ctx context.Context, in []byte) ([]byte, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return in, nil
	}}
	e, err := Open(context.Background(), Config{DatabaseURL: url, AppVersion: "test-1", ExecutorID: "worker-a",
		WorkerConcurrency: 2, RateLimit: &RateLimit{Limit: 100, Period: time.Minute}}, tasks)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	items := make([]engine.Item, 4)
	for i := range items {
		items[i] = engine.Item{ID: fmt.Sprint("s", i), Task: "hold", Input: []byte{byte(i)}}
	}
	res := make(chan []engine.Result, 1)
	go func() { res <- e.FanOut(context.Background(), items) }()
	for range 2 {
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("the items never started")
		}
	}
	st, err := ReadStatus(context.Background(), url, "baton", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running != 2 || st.Waiting != 2 || len(st.Workers) != 1 || st.Workers[0].ID != "worker-a" || st.Workers[0].Running != 2 {
		t.Fatalf("while two run: %+v", st)
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
	st, err = ReadStatus(context.Background(), url, "baton", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running != 0 || st.Waiting != 0 || st.Finished != 4 || len(st.Workers) != 1 || st.Workers[0].Finished != 4 {
		t.Fatalf("after: %+v", st)
	}
	if _, err := ReadStatus(context.Background(), url, "nope", time.Minute); !errors.Is(err, ErrNoQueue) {
		t.Errorf("unknown queue: %v", err)
	}
}
