package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/engine/docstore"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

// envAppVersion overrides the application version coordinators and
// workers agree on; without it the version is baton's own.
const envAppVersion = "BATON_APP_VERSION"

// appVersion is the explicit application version work is recorded under:
// a worker takes only work enqueued under its own version, so that a
// coordinator and a worker that would build different requests never
// share work. It is baton's version (for a build from a checkout, its
// commit), never a hash of the binary.
func appVersion() string {
	if v := os.Getenv(envAppVersion); v != "" {
		return v
	}
	bi, _ := debug.ReadBuildInfo()
	return versionString(bi)
}

// distributed is what a coordinator or a worker opens for the dbos engine.
type distributed struct {
	eng  *dbosengine.Engine
	docs *docstore.Store
}

func (d *distributed) Close() error {
	err := d.eng.Close()
	d.docs.Close()
	return err
}

// openDistributed opens the document store and the dbos engine with the
// sub-agent and map/reduce call tasks over model (each process its own, with its own keys).
// wrap, when set, wraps the task (the worker's log line per item).
func openDistributed(ctx context.Context, url string, cfg dbosengine.Config, model llm.Model, wrap func(engine.Task) engine.Task) (*distributed, error) {
	docs, err := docstore.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	tasks := orchestrate.Tasks(model, docs)
	if wrap != nil {
		for name, task := range tasks {
			tasks[name] = wrap(task)
		}
	}
	cfg.DatabaseURL, cfg.AppVersion = url, appVersion()
	eng, err := dbosengine.Open(ctx, cfg, tasks)
	if err != nil {
		docs.Close()
		return nil, err
	}
	return &distributed{eng: eng, docs: docs}, nil
}

// coordinatorID names a coordinating ask in the engine's records.
func coordinatorID() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("ask-%s-%d", h, os.Getpid())
}

// warnIfNoWorker says, once, when no worker of this version is alive to take
// the coordinator's work: the ask would otherwise wait without a word.
func warnIfNoWorker(ctx context.Context, w io.Writer, d *distributed) {
	ids, err := d.eng.LiveWorkers(ctx)
	if err != nil || len(ids) > 0 {
		return
	}
	fmt.Fprintf(w, "baton: warning: no baton worker of version %q is alive on this database; the sub-agent calls wait on the queue until one starts (baton worker --database-url URL)\n", appVersion())
}

// openCoordinator opens the dbos engine for an ask that enqueues its
// sub-agent calls and leaves them to the workers. It registers the task
// too, with its own model, because DBOS recovers a process's own unfinished
// work in that process. rate, when set, is the --rpm it stores for all the
// queue's workers.
func openCoordinator(ctx context.Context, flag string, model llm.Model, rate *dbosengine.RateLimit) (*distributed, error) {
	url, err := databaseURL(flag)
	if err != nil {
		return nil, err
	}
	return openDistributed(ctx, url, dbosengine.Config{ExecutorID: coordinatorID(), EnqueueOnly: true, RateLimit: rate}, model, nil)
}
