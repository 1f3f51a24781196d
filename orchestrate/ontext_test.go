package orchestrate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// Config.OnText gets the synthesis, and only it, as it is streamed: the
// planner's JSON and the sub-agents' findings never reach it, and its
// pieces joined are the record's answer.
func TestOnTextStreamsOnlyTheSynthesis(t *testing.T) {
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
			cfg := config(mk(t, s))
			var got []string
			cfg.OnText = func(d string) { got = append(got, d) }
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < 2 || strings.Join(got, "") != rec.Answer {
				t.Fatalf("OnText got %q, answer %q", got, rec.Answer)
			}
			streamed := 0
			for _, r := range s.Requests() {
				if r.Stream {
					streamed++
				}
			}
			if streamed != 1 {
				t.Errorf("%d requests streamed; only the synthesis should", streamed)
			}
		})
	}
}
