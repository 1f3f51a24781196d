package dbosengine

import (
	"errors"
	"fmt"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
)

// queueConflict is how this process registers the queue over the row
// stored: a worker replaces it (with the limits sharedLimits kept); a
// coordinator leaves it alone, unless it sets a shared limit itself (ask
// --engine dbos --rpm), and then keeps the workers' concurrency, which
// DBOS's registration would otherwise overwrite with the coordinator's.
func queueConflict(dctx dbos.Context, cfg *Config) (dbos.QueueConflictResolution, error) {
	if !cfg.EnqueueOnly {
		return dbos.QueueConflictAlwaysUpdate, nil
	}
	if cfg.RateLimit == nil && cfg.GlobalConcurrency == 0 {
		return dbos.QueueConflictNeverUpdate, nil
	}
	q, err := dbos.RetrieveQueue(dctx, cfg.Queue)
	switch {
	case errors.Is(err, dbos.ErrQueueNotFound):
	case err != nil:
		return "", fmt.Errorf("read its stored limits: %w", err)
	default:
		if n := q.GetWorkerConcurrency(); n != nil && *n > 0 {
			cfg.WorkerConcurrency = *n
		}
	}
	return dbos.QueueConflictAlwaysUpdate, nil
}
