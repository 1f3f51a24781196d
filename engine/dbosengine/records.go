package dbosengine

import (
	"errors"
	"fmt"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/baton-dev/baton/engine"
)

// statuses returns the recorded status of each of ids that exists.
func (e *Engine) statuses(ids []string) (map[string]dbos.WorkflowStatusType, error) {
	out := map[string]dbos.WorkflowStatusType{}
	if len(ids) == 0 {
		return out, nil
	}
	ws, err := dbos.ListWorkflows(e.dctx, dbos.WithFilterWorkflowIDs(ids...),
		dbos.WithFilterLoadInput(false), dbos.WithFilterLoadOutput(false))
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	for _, w := range ws {
		out[w.ID] = w.Status
	}
	return out, nil
}

// start makes the item's workflow run, given its recorded status ("" when
// there is none): a new one is started (in this process, or on the queue);
// a failed one is rewound to its first failed step, or past its last step
// when the task itself failed; a cancelled one, or one out of recovery
// attempts, is resumed; anything else is already running or done.
func (e *Engine) start(dctx dbos.Context, it engine.Item, status dbos.WorkflowStatusType, queued bool) error {
	switch status {
	case "":
		opts := []dbos.WorkflowOption{dbos.WithWorkflowID(it.ID)}
		if queued {
			opts = append(opts, dbos.WithQueue(e.queue))
		}
		if _, err := dbos.RunWorkflow(dctx, e.workflow, input{Task: it.Task, Input: it.Input}, opts...); err != nil {
			return fmt.Errorf("start: %w", err)
		}
	case dbos.WorkflowStatusError:
		from, err := e.rewindPoint(it.ID)
		if err != nil {
			return err
		}
		opts := []dbos.RewindWorkflowOption{dbos.WithRewindStartStep(from)}
		if queued {
			opts = append(opts, dbos.WithRewindQueue(e.queue.GetName()))
		}
		if _, err := dbos.RewindWorkflow[[]byte](e.dctx, it.ID, opts...); err != nil {
			return fmt.Errorf("rewind to step %d: %w", from, err)
		}
	case dbos.WorkflowStatusCancelled, dbos.WorkflowStatusMaxRecoveryAttemptsExceeded:
		var opts []dbos.ResumeWorkflowOption
		if queued {
			opts = append(opts, dbos.WithResumeQueue(e.queue.GetName()))
		}
		if _, err := dbos.ResumeWorkflow[[]byte](e.dctx, it.ID, opts...); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	return nil
}

// rewindPoint is the first step of a failed workflow to run again: its
// first failed step, or the one after its last when the task failed after
// its steps.
func (e *Engine) rewindPoint(id string) (uint, error) {
	steps, err := dbos.GetWorkflowSteps(e.dctx, id)
	if err != nil {
		return 0, fmt.Errorf("steps: %w", err)
	}
	next := 0
	for _, s := range steps {
		if s.Error != nil {
			return uint(s.StepID), nil
		}
		next = max(next, s.StepID+1)
	}
	return uint(next), nil
}

// terminal reports whether a workflow of status s has ended.
func terminal(s dbos.WorkflowStatusType) bool {
	switch s {
	case dbos.WorkflowStatusSuccess, dbos.WorkflowStatusError, dbos.WorkflowStatusCancelled,
		dbos.WorkflowStatusMaxRecoveryAttemptsExceeded:
		return true
	}
	return false
}

// result reads an ended workflow's output or error.
func (e *Engine) result(id string, status dbos.WorkflowStatusType) ([]byte, error) {
	switch status {
	case dbos.WorkflowStatusCancelled:
		return nil, errors.New("cancelled; run it again to continue")
	case dbos.WorkflowStatusMaxRecoveryAttemptsExceeded:
		return nil, errors.New("recovered too many times without finishing; run it again to continue")
	}
	h, err := dbos.RetrieveWorkflow[[]byte](e.dctx, id)
	if err != nil {
		return nil, err
	}
	return h.GetResult()
}

// settle waits, for a few seconds at most, until id is no longer PENDING.
func (e *Engine) settle(id string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && e.stop.Err() == nil {
		st, err := e.statuses([]string{id})
		if err != nil || st[id] != dbos.WorkflowStatusPending {
			return
		}
		time.Sleep(e.poll)
	}
}
