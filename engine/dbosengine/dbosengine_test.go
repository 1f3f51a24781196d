package dbosengine_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/engine/enginetest"
	"github.com/baton-dev/baton/internal/pgtest"
)

func open(t *testing.T, url string, tasks engine.Tasks, concurrency int) engine.Engine {
	e, err := dbosengine.Open(context.Background(), dbosengine.Config{
		DatabaseURL: url, AppVersion: "test-1", ExecutorID: "exec-1", WorkerConcurrency: concurrency,
	}, tasks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestContract(t *testing.T) {
	enginetest.Run(t, enginetest.Backend{NewStore: func(t *testing.T) string { return pgtest.Database(t) }, Open: open})
}
