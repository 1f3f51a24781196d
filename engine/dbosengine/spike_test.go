package dbosengine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/baton-dev/baton/internal/pgtest"
)

// spike is a two-step workflow whose steps count their executions; the
// second blocks while block is set, until its context ends, as a step cut
// short by a crash would.
type spike struct {
	first, second atomic.Int32
	block         atomic.Bool
	inSecond      chan struct{}
}

func (s *spike) workflow(ctx dbos.Context, in string) (string, error) {
	a, err := dbos.RunAsStep(ctx, func(context.Context) (string, error) {
		s.first.Add(1)
		return "a(" + in + ")", nil
	}, dbos.WithStepName("first"))
	if err != nil {
		return "", err
	}
	b, err := dbos.RunAsStep(ctx, func(sctx context.Context) (string, error) {
		s.second.Add(1)
		if s.block.Load() {
			s.inSecond <- struct{}{}
			<-sctx.Done()
			return "", sctx.Err()
		}
		return "b(" + a + ")", nil
	}, dbos.WithStepName("second"))
	return b, err
}

// launch makes, registers and launches a DBOS context as executor id.
func (s *spike) launch(t *testing.T, url, id string) dbos.Context {
	t.Helper()
	ctx, err := dbos.NewContext(context.Background(), dbos.Config{
		AppName: "baton-spike", DatabaseURL: url, ApplicationVersion: "spike-1", ExecutorID: id, Logger: quiet,
	})
	if err != nil {
		t.Fatalf("dbos context %s: %v", id, err)
	}
	// A stable name, not the function's: another binary must find it.
	dbos.RegisterWorkflow(ctx, s.workflow, dbos.WithWorkflowName("spike"))
	if err := dbos.Launch(ctx); err != nil {
		t.Fatalf("launch %s: %v", id, err)
	}
	return ctx
}

func result(t *testing.T, h dbos.WorkflowHandle[string]) string {
	t.Helper()
	out, err := h.GetResult(dbos.WithHandleTimeout(60 * time.Second))
	if err != nil {
		t.Fatalf("workflow %s: %v", h.GetWorkflowID(), err)
	}
	return out
}

// TestSpikeRecordedStepsAreNotRunAgain is the spike of issue 11: a
// workflow of two steps against a real PostgreSQL. Run again with the same
// workflow ID, a finished workflow runs no step; cut short inside its second
// step and recovered by a new process with the same executor ID, it runs
// only the second step again; left by one executor and resumed by another,
// the same.
func TestSpikeRecordedStepsAreNotRunAgain(t *testing.T) {
	url := pgtest.Database(t)
	s := &spike{inSecond: make(chan struct{}, 1)}
	w1 := s.launch(t, url, "w1")

	h, err := dbos.RunWorkflow(w1, s.workflow, "x", dbos.WithWorkflowID("wf-done"))
	if err != nil {
		t.Fatal(err)
	}
	if got := result(t, h); got != "b(a(x))" {
		t.Fatalf("result %q", got)
	}
	// The same ID again, even with another input: the recorded result, and
	// no step runs.
	h, err = dbos.RunWorkflow(w1, s.workflow, "other", dbos.WithWorkflowID("wf-done"))
	if err != nil {
		t.Fatal(err)
	}
	if got := result(t, h); got != "b(a(x))" {
		t.Fatalf("re-run result %q, want the recorded b(a(x))", got)
	}
	if f, sec := s.first.Load(), s.second.Load(); f != 1 || sec != 1 {
		t.Fatalf("steps ran first=%d second=%d times, want 1 and 1", f, sec)
	}
	steps, err := dbos.GetWorkflowSteps(w1, "wf-done")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].StepName != "first" || steps[1].StepName != "second" {
		t.Fatalf("recorded steps %+v", steps)
	}

	// Cut short inside the second step: Shutdown cancels the step's
	// context and leaves the workflow PENDING, as a crash would.
	s.block.Store(true)
	if _, err := dbos.RunWorkflow(w1, s.workflow, "y", dbos.WithWorkflowID("wf-cut")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s.inSecond, "the second step of wf-cut")
	if err := dbos.Shutdown(w1, 10*time.Second); err != nil {
		t.Fatalf("shutdown w1: %v", err)
	}
	if f, sec := s.first.Load(), s.second.Load(); f != 2 || sec != 2 {
		t.Fatalf("before recovery first=%d second=%d, want 2 and 2", f, sec)
	}
	s.block.Store(false)
	// A new process with the same executor ID recovers it at Launch.
	w1b := s.launch(t, url, "w1")
	defer dbos.Shutdown(w1b, 10*time.Second)
	hc, err := dbos.RetrieveWorkflow[string](w1b, "wf-cut")
	if err != nil {
		t.Fatal(err)
	}
	if got := result(t, hc); got != "b(a(y))" {
		t.Fatalf("recovered result %q", got)
	}
	if f, sec := s.first.Load(), s.second.Load(); f != 2 || sec != 3 {
		t.Fatalf("after recovery first=%d second=%d, want 2 (recorded, not run) and 3 (run again)", f, sec)
	}
}

// TestSpikeAnotherExecutorAdoptsPendingWork shows the public way for a live
// executor to take a workflow that a dead one left PENDING: find it by
// executor ID and status, then ResumeWorkflow, which enqueues it from its
// last recorded step. The dead executor's ID never comes back.
func TestSpikeAnotherExecutorAdoptsPendingWork(t *testing.T) {
	url := pgtest.Database(t)
	s := &spike{inSecond: make(chan struct{}, 1)}
	s.block.Store(true)
	dead := s.launch(t, url, "dead")
	if _, err := dbos.RunWorkflow(dead, s.workflow, "z", dbos.WithWorkflowID("wf-orphan")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s.inSecond, "the second step of wf-orphan")
	if err := dbos.Shutdown(dead, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	s.block.Store(false)

	live := s.launch(t, url, "live")
	defer dbos.Shutdown(live, 10*time.Second)
	pending, err := dbos.ListWorkflows(live, dbos.WithFilterExecutorIDs("dead"), dbos.WithFilterStatus(dbos.WorkflowStatusPending))
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != "wf-orphan" {
		t.Fatalf("pending of the dead executor: %+v", pending)
	}
	if _, err := dbos.ResumeWorkflow[string](live, "wf-orphan"); err != nil {
		t.Fatal(err)
	}
	h, err := dbos.RetrieveWorkflow[string](live, "wf-orphan")
	if err != nil {
		t.Fatal(err)
	}
	if got := result(t, h); got != "b(a(z))" {
		t.Fatalf("adopted result %q", got)
	}
	st, err := h.GetStatus()
	if err != nil {
		t.Fatal(err)
	}
	if st.ExecutorID != "live" {
		t.Errorf("adopted workflow ran on %q, want live", st.ExecutorID)
	}
	if f, sec := s.first.Load(), s.second.Load(); f != 1 || sec != 2 {
		t.Fatalf("first=%d second=%d, want 1 (recorded by the dead executor) and 2", f, sec)
	}
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
