package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-dev/baton/engine"
)

func TestStepOutsideATaskIsRefused(t *testing.T) {
	ran := false
	_, err := engine.Step(context.Background(), "k", func(context.Context) ([]byte, error) { ran = true; return nil, nil })
	if !errors.Is(err, engine.ErrNoWorkflow) || ran {
		t.Fatalf("Step outside a task: %v (ran=%v), want ErrNoWorkflow and nothing run", err, ran)
	}
}
