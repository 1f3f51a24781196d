package orchestrate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// A sub-agent whose stream always ends before message_stop is a failed
// subtask, never an ok one with half a finding; the synthesis is told so.
func TestAskCutStreamIsAFailedSubtask(t *testing.T) {
	const half = "Revenue rose because the enterprise"
	cut := llmtest.Always(llmtest.NoEnd(llmtest.Text(half + " tier grew."))).WhenContains("Your subtask: Summarise the cost picture")
	s := llmtest.NewServer(t, cut, script(llmtest.Text(planJSON)))
	m := llm.WithRetry(providers["anthropic"](t, s), llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	cfg := config(m)
	cfg.Stream = true
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if !errors.Is(err, orchestrate.ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	failed := rec.Subtasks[2]
	if failed.Status != orchestrate.StatusFailed || !strings.Contains(failed.Error, "message_stop") || strings.Contains(failed.Output, half) {
		t.Errorf("cut subtask = %+v, want failed for a stream without message_stop", failed)
	}
	for _, r := range s.Requests() {
		if isSynthesis(r) && strings.Contains(r.Messages[0].Content, half) {
			t.Errorf("the synthesis was given the half finding:\n%s", r.Messages[0].Content)
		}
	}
}

// A synthesis that is always cut short fails the run: no half answer.
func TestAskCutSynthesisIsNoAnswer(t *testing.T) {
	const half = "FINAL: revenue up,"
	cut := llmtest.Always(llmtest.NoEnd(llmtest.Text(half + " costs down."))).WhenSystem("You are the synthesis step")
	s := llmtest.NewServer(t, cut, script(llmtest.Text(planJSON)))
	m := llm.WithRetry(providers["openai"](t, s), llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	cfg := config(m)
	cfg.Stream = true
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err == nil || !errors.Is(err, llm.ErrIncomplete) {
		t.Fatalf("err = %v, want an incomplete synthesis", err)
	}
	if rec != nil && strings.Contains(rec.Answer, half) {
		t.Errorf("answer = %q, the half text", rec.Answer)
	}
}
