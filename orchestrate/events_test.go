package orchestrate_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// The progress display never showed self-answered subtasks: nothing told
// it about them. Assemble now reports every subtask of the plan, in plan
// order, before dispatch starts.
func TestAssembleReportsEverySubtaskInPlanOrder(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := config(providers["anthropic"](t, s))
	var mu sync.Mutex
	var got []string
	cfg.Progress = func(e orchestrate.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%s %d %s", e.Phase, e.Index, e.Status))
	}
	if _, err := orchestrate.Ask(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{"plan -1 running", "assemble -1 running", "assemble 0 self", "assemble 1 queued", "assemble 2 queued"}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("events = %q\nwant them to start with %q", got, want)
	}
}
