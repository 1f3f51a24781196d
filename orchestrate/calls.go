package orchestrate

import (
	"context"
	"sort"
	"time"

	"github.com/baton-dev/baton/llm"
)

// Phases of a Call, as they appear in run records.
const (
	CallPlanner   = "planner"
	CallSubagent  = "subagent"
	CallMap       = "map"
	CallReduce    = "reduce"
	CallSynthesis = "synthesis"
)

// Call is one model request the run sent, for the timeline of a report:
// when it started and ended, counted from the run's start, and every retry
// with its error and its wait. A request refused before it was sent (over
// its window) is not a call. Field names are a public contract, like the
// rest of the record.
type Call struct {
	// Phase is CallPlanner, CallSubagent, CallMap, CallReduce or
	// CallSynthesis.
	Phase string `json:"phase"`
	// Subtask is the index of the subtask the call belongs to, as in
	// subtasks[].index; -1 for the planner and the synthesis.
	Subtask int `json:"subtask"`
	// Label tells calls of one phase apart where it matters: "plan repair"
	// for the planner's repair request, "plan expand" for the outline
	// planner's call after it asked to see collapsed subsections.
	Label string `json:"label,omitempty"`
	// StartMS and EndMS are milliseconds since the run started; a call
	// starts once it holds a sub-agent slot, so waiting for one is not in it.
	StartMS int64 `json:"start_ms"`
	EndMS   int64 `json:"end_ms"`
	// Status is "ok" or "failed"; Error says why a call failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Attempts counts the requests sent for this call, retries included.
	Attempts int     `json:"attempts"`
	Retries  []Retry `json:"retries,omitempty"`
	// PromptTokens is the local count of the request; Usage what the
	// provider reported for it.
	PromptTokens int       `json:"prompt_tokens"`
	Usage        llm.Usage `json:"usage"`
}

// Retry is one failed attempt of a call that the retry policy sent again.
type Retry struct {
	Attempt int    `json:"attempt"` // the attempt that failed, 1-based
	Error   string `json:"error"`
	// AtMS is when the attempt failed, since the run started; WaitMS how
	// long the policy waited before the next attempt.
	AtMS   int64 `json:"at_ms"`
	WaitMS int64 `json:"wait_ms"`
}

// startCall begins the record of one call and returns the context to send
// it with (it learns of the call's retries) and the function that ends it.
func (r *run) startCall(ctx context.Context, phase string, subtask int, label string, n int) (context.Context, func(*llm.Response, error)) {
	c := &Call{Phase: phase, Subtask: subtask, Label: label, StartMS: r.sinceStart(), Status: StatusOK, PromptTokens: n}
	var retries []Retry // appended on the caller's goroutine only
	ctx = llm.WithRetryObserver(ctx, func(attempt int, wait time.Duration, err error) {
		retries = append(retries, Retry{Attempt: attempt, Error: r.errText(err), AtMS: r.sinceStart(), WaitMS: wait.Milliseconds()})
	})
	return ctx, func(resp *llm.Response, err error) {
		c.EndMS = r.sinceStart()
		c.Retries = retries
		c.Attempts = len(retries) + 1
		if resp != nil {
			c.Usage = resp.Usage
			if resp.Attempts > 0 {
				c.Attempts = resp.Attempts
			}
		}
		if err != nil {
			c.Status, c.Error = StatusFailed, r.errText(err)
		}
		r.mu.Lock()
		r.rec.Calls = append(r.rec.Calls, *c)
		r.mu.Unlock()
	}
}

func (r *run) sinceStart() int64 { return r.cfg.Now().Sub(r.start).Milliseconds() }

// sortCalls puts the calls in the order they started; parallel sub-agents
// append them as they end.
func sortCalls(calls []Call) {
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].StartMS < calls[j].StartMS })
}
