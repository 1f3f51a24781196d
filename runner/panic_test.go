package runner_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// A panic inside a sub-agent's call is that sub-agent failing: the parent
// step gets an error result saying so and the run goes on, instead of the
// process ending with a stack trace.
func TestSubagentPanicIsAFailedSubagent(t *testing.T) {
	dir := copyExample(t)
	s := llmtest.NewServer(t, script(false))
	m, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: s.AnthropicBaseURL(), Model: "claude-test",
		HTTPClient: &http.Client{Transport: llmtest.PanicTransport("You are a sub-agent of a baton workflow step", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: m, ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range s.Requests() {
		for _, res := range r.ToolResults() {
			if strings.Contains(res.Content, "the sub-agent failed: internal error") {
				found = true
			}
		}
	}
	if !found {
		t.Error("no tool result told the step its sub-agent failed with an internal error")
	}
}
