package orchestrate_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/localengine"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// A scope-all count over a corpus ten times the window, through an engine:
// every map and reduce call is an engine item, a map item names its piece
// of the document by place and carries none of its text, the answer is the
// planted count (so every piece went back in the right place: the fake
// counts only what it was sent) and the record equals an in-process run's.
func TestAskMapReduceThroughAnEngine(t *testing.T) {
	const window = 4000
	text, planted := corpus(140)
	s := llmtest.NewServer(t, counting())
	s.SetContextWindow(window)
	m := providers["openai"](t, s)
	cfg := func() orchestrate.Config {
		return orchestrate.Config{
			Task: "How many times is " + marker + " mentioned in total?", Context: text, Sources: []string{"notes.md"},
			Model: m, ModelName: "test-model", Counter: tokens.Default(), Window: window,
			SubagentMax: 600, SynthesisMax: 600, PlannerMax: 600, Concurrency: 3,
		}
	}
	want, err := orchestrate.Ask(context.Background(), cfg())
	if err != nil {
		t.Fatalf("Ask in process: %v", err)
	}
	docs := &memDocs{}
	var mu sync.Mutex
	var items []orchestrate.CallInput
	call := orchestrate.NewCallTask(m, docs)
	e, err := localengine.New(engine.Tasks{
		orchestrate.SubagentTask: orchestrate.NewSubagentTask(m, docs),
		orchestrate.CallTask: func(ctx context.Context, in []byte) ([]byte, error) {
			var ci orchestrate.CallInput
			if err := json.Unmarshal(in, &ci); err != nil {
				t.Errorf("call item: %v", err)
			}
			mu.Lock()
			items = append(items, ci)
			mu.Unlock()
			return call(ctx, in)
		},
	}, localengine.Options{Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := cfg()
	c.Engine, c.Documents = e, docs
	got, err := orchestrate.Ask(context.Background(), c)
	if err != nil {
		t.Fatalf("Ask through the engine: %v", err)
	}
	if got.Answer != want.Answer || !strings.Contains(got.Answer, "FINAL count:") {
		t.Errorf("answer %q through the engine, %q in process (%d planted)", got.Answer, want.Answer, planted)
	}
	st := got.Subtasks[0]
	var maps, reduces int
	for _, ci := range items {
		body, _ := json.Marshal(ci)
		if ci.Ref != nil {
			maps++
			if strings.Contains(string(body), "Observation 1 at site") {
				t.Errorf("a map item carries the document's text: %.200s", body)
			}
		} else {
			reduces++
		}
	}
	if maps != st.MapCalls || reduces != st.ReduceCalls || maps < 10 || reduces < 3 {
		t.Errorf("engine items: %d maps by reference, %d others; the record has %d map and %d reduce calls", maps, reduces, st.MapCalls, st.ReduceCalls)
	}
	if docs.puts != 1 {
		t.Errorf("the document was stored %d times, want once", docs.puts)
	}
	if d := diffRecords(t, want, got); d != "" {
		t.Errorf("records differ (-in process +through the engine):\n%s", d)
	}
}
