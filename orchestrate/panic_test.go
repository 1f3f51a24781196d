package orchestrate_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// panicking is an HTTP transport that panics on the requests whose body
// holds marker: a bug below the adapter, on one sub-agent's goroutine.
type panicking struct {
	marker string
	next   http.RoundTripper
}

func (p panicking) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(p.marker)) {
		panic("transport bug")
	}
	return p.next.RoundTrip(r)
}

// A panic while one sub-agent's call is in flight is that subtask failing
// with an internal error, recorded like any other failure; the process
// does not die and the other subtasks' work is kept.
func TestAskSubagentPanicIsAFailedSubtask(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	hc := &http.Client{Transport: panicking{marker: "Your subtask: Summarise the cost picture", next: http.DefaultTransport}}
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
