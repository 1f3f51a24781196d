package runlog

import (
	"math"
	"slices"
	"testing"
)

// The figures are worked out by hand in the comments.
func TestContinuousSession(t *testing.T) {
	use := &Usage{InputTokens: 1, OutputTokens: 1}
	events := []Event{
		{Type: RunStart},
		{Type: StepStart, Step: "1"},
		{Type: ModelCall, Step: "1", Turn: 1, ContextTokens: 1000, Usage: use},                                            // 1000, nothing dropped yet
		{Type: ModelCall, Step: "1", Turn: 2, ContextTokens: 3000, Usage: use},                                            // 3000
		{Type: ModelCall, Step: "1", Turn: 2, ContextTokens: 500, Usage: use, Subagent: true},                             // 500: its own session
		{Type: Reset, Step: "1", Reason: ReasonThreshold, ContextTokens: 3500},                                            // drops 3500
		{Type: ModelCall, Step: "1", Turn: 3, ContextTokens: 1200, Usage: use},                                            // 1200 + 3500 = 4700
		{Type: StepEnd, Step: "1", Status: "ok"},                                                                          //
		{Type: Reset, Reason: ReasonBoundary, ContextTokens: 9999},                                                        // counted at the step change
		{Type: StepStart, Step: "2"},                                                                                      // drops 1200: 4700 in all
		{Type: ModelCall, Step: "2", Turn: 1, ContextTokens: 800, Usage: use},                                             // 800 + 4700 = 5500
		{Type: ModelCall, Step: "2", Turn: 1, ContextTokens: 800, Replayed: true},                                         // paid above
		{Type: ModelCall, Step: "2", Turn: 1, ContextTokens: 800, Usage: use, Note: "answered from the step journal"},     // an older log's replay
		{Type: StepStart, Step: "2"},                                                                                      // a resume: nothing dropped
		{Type: ModelCall, Step: "2", Turn: 2, ContextTokens: 900, Usage: use},                                             // 900 + 4700 = 5600
		{Type: Reset, Step: "2", Reason: ReasonThreshold, ContextTokens: 2000, Replayed: true},                            // counted when it happened
		{Type: StepStart, Step: "3"},                                                                                      // the replayed reset left nothing in hand
		{Type: ModelCall, Step: "3", Turn: 1, Model: "agent-cmd", Usage: &Usage{}},                                        // context unknown: not counted
		{Type: ModelCall, Step: "3", Turn: 2, Usage: &Usage{InputTokens: 100, CacheReadTokens: 50, CacheWriteTokens: 25}}, // 175 + 4700 = 4875
	}
	for i := range events {
		events[i].Line = i + 1
	}
	c := ContinuousSession(events)
	if c.SentTokens != 1000+3000+500+1200+800+900+175 {
		t.Errorf("sent %d, want 7575", c.SentTokens)
	}
	if want := 1000 + 3000 + 500 + 4700 + 5500 + 5600 + 4875; c.InputTokens != want {
		t.Errorf("baseline %d, want %d", c.InputTokens, want)
	}
	if c.Dropped != 4700 {
		t.Errorf("dropped %d, want 4700", c.Dropped)
	}
	var lines, dropped []int
	for _, call := range c.Calls {
		lines, dropped = append(lines, call.Line), append(dropped, call.Dropped)
	}
	if got, want := lines, []int{3, 4, 5, 7, 11, 15, 19}; !slices.Equal(got, want) {
		t.Errorf("calls at lines %v, want %v", got, want)
	}
	if got, want := dropped, []int{0, 0, 0, 3500, 4700, 4700, 4700}; !slices.Equal(got, want) {
		t.Errorf("dropped before each call %v, want %v", got, want)
	}
	r, ok := c.SavingsRatio()
	if want := 1 - 7575.0/25175.0; !ok || math.Abs(r-want) > 1e-12 {
		t.Errorf("savings %v (%v), want %v", r, ok, want)
	}
}

func TestContinuousSessionOfNothing(t *testing.T) {
	for _, events := range [][]Event{nil, {{Type: RunStart}}, {{Type: ModelCall, Replayed: true, ContextTokens: 10}}} {
		c := ContinuousSession(events)
		if _, ok := c.SavingsRatio(); ok || c.InputTokens != 0 || len(c.Calls) != 0 {
			t.Errorf("%v: %+v", events, c)
		}
	}
}
