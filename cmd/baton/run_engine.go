package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/runner"
)

// runEngine is the opener of the dbos engine for `baton run --engine dbos`
// over the database at url.
//
// A run's step items belong to that run alone: the workspace they work on
// is on the disk of the process running the run, so no worker may take
// them. They are recorded under an application name of their own
// (baton-run-<run id>), which DBOS's queues and baton's adoption both keep
// apart from every other application's work, and under an executor ID that
// is the run's own (run-<run id>). A process that resumes the run is
// therefore the same executor to DBOS: when it opens the engine, DBOS
// recovers the step a killed process left unfinished, at once, in the
// resuming process, and no heartbeat has to go stale first. The workspace
// lock (runlock) makes sure no two live processes run one workspace, so no
// two share that executor ID.
func runEngine(url string) runner.EngineOpener {
	return func(ctx context.Context, runID string, tasks engine.Tasks) (engine.Engine, error) {
		id := strings.ToLower(runID)
		eng, err := dbosengine.Open(ctx, dbosengine.Config{
			DatabaseURL: url, AppVersion: appVersion(),
			AppName: "baton-run-" + id, Queue: "baton-run-" + id, ExecutorID: "run-" + id,
			Role: dbosengine.RoleRun,
		}, tasks)
		if err != nil {
			return nil, fmt.Errorf("engine dbos: %w", err)
		}
		return eng, nil
	}
}
