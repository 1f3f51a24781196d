package orchestrate_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// A panic while one sub-agent's call is in flight is that subtask failing
// with an internal error, recorded like any other failure; the process
// does not die and the other subtasks' work is kept.
func TestAskSubagentPanicIsAFailedSubtask(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	hc := &http.Client{Transport: llmtest.PanicTransport("Your subtask: Summarise the cost picture", nil)}
	m, err := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: s.AnthropicBaseURL(), Model: "claude-test", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := orchestrate.Ask(context.Background(), config(m))
	if !errors.Is(err, orchestrate.ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	failed := rec.Subtasks[2]
	if failed.Status != orchestrate.StatusFailed || !strings.Contains(failed.Error, "internal error") {
		t.Errorf("subtask 3 = %+v, want failed with an internal error", failed)
	}
	if rec.Subtasks[1].Status != orchestrate.StatusOK {
		t.Errorf("subtask 2 = %+v, want ok", rec.Subtasks[1])
	}
}
