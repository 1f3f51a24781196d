package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/runner"
)

// A run cancelled while a tool call is stuck (a write that ignores the
// context, as a slow disk or a path costly to check would) ends at once,
// with the tool still stuck: it does not wait for the call. The step is
// recorded as interrupted, and the resume runs the call again without
// asking any answered turn twice. Before, Run waited for the tool, and
// this test timed out.
func TestCancelDoesNotWaitForAStuckTool(t *testing.T) {
	ref, refRes := reference(t)
	dir := copyExample(t)
	tr := newTurns()
	s := llmtest.NewServer(t, tr.rule(script(true)))
	started, release := make(chan struct{}), make(chan struct{})
	restore := runner.BlockTool("write_file", "greet.py", started, release)
	defer restore()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	_, err := runner.Run(ctx, runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	var se *runner.StepError
	if !errors.As(err, &se) || se.Kind != runner.FailInterrupted || se.Step != 3 {
		t.Fatalf("Run = %v, want step 3 interrupted", err)
	}
	id, _ := runner.Unfinished(load(t, dir))
	events, _, _ := runlog.Read(filepath.Join(dir, ".baton", "runs", id, "events.jsonl"))
	if last := events[len(events)-1]; last.Type != runlog.StepEnd || last.Status != "interrupted" || last.Step != "3" || !strings.HasPrefix(last.Note, "interrupted: ") {
		t.Errorf("the last event is %+v, want step 3's step_end, interrupted", last)
	}

	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["openai"](t, s), ModelName: "test-model"})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	tr.check(t)
	if res.Summary != refRes.Summary {
		t.Errorf("summary %q, uninterrupted %q", res.Summary, refRes.Summary)
	}
	checkSameNumber(t, dir, id, "implement-change", "3")
	sameOutcome(t, dir, ref)
}
