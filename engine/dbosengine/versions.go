package dbosengine

import (
	"context"
	"fmt"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
)

// WaitingByVersion counts the items waiting on queue by the application
// version they were enqueued under. A process takes only work of its own
// version, so a worker uses it to say which waiting work it refuses.
func WaitingByVersion(ctx context.Context, databaseURL, queue string) (map[string]int, error) {
	c, err := dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: databaseURL, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("waiting work: %w", err)
	}
	defer c.Shutdown(c, 10*time.Second)
	rows, err := dbos.GetWorkflowAggregates(c, dbos.GetWorkflowAggregatesInput{
		GroupByApplicationVersion: true, SelectCount: true, QueueName: []string{queue},
		Status: []dbos.WorkflowStatusType{dbos.WorkflowStatusEnqueued},
	})
	if err != nil {
		return nil, fmt.Errorf("waiting work: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[str(r.Group["application_version"])] += int(deref(r.Count))
	}
	return out, nil
}
