package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/tokens"
)

// The window guarantee: no request of a run is sent that would not fit the
// budget's window. Every request (step turns, the ledger side request,
// sub-agent turns, condense requests) passes through stepRun.call, which
// asks the step's window to fit it first.
//
// A local count is only an estimate of what the provider's own tokenizer
// will see, so the guard compares the window with the local count scaled by
// a stated safety margin, or by the ratio the provider's reported usage has
// shown on this step's own calls when that is larger.
const (
	// windowMargin is the share added to every local count for tokenizer
	// differences: 10%.
	windowMargin = 0.10
	// calibrationSlack is added on top of a measured ratio, which is an
	// average over the calls seen so far, not a bound.
	calibrationSlack = 0.05
	// maxScale caps what a measured ratio can make of a count: a provider
	// (or a proxy) reporting usage far from the prompt sent must not make
	// every request look over the window. Past it, the provider's own
	// "prompt too long" is the guard, and a reset follows.
	maxScale = 2.0
	// messageOverhead and requestOverhead are the tokens a provider adds
	// around each message (role markers) and each request.
	messageOverhead = 4
	requestOverhead = 16
	// minReplyTokens is the smallest reply a request may ask for when its
	// max_tokens is lowered so that prompt and reply fit the window.
	minReplyTokens = 1024
)

// overWindowError is a request baton did not send because it would not fit
// the window. It matches llm.ErrPromptTooLong, so callers handle it as they
// handle a provider's "prompt too long" answer.
type overWindowError struct {
	prompt, reply, window int
}

func (e *overWindowError) Error() string {
	return fmt.Sprintf("the request needs about %d tokens (%d of prompt, at least %d of reply) and the context window is %d tokens; baton did not send it",
		e.prompt+e.reply, e.prompt, e.reply, e.window)
}

func (e *overWindowError) Is(target error) bool { return target == llm.ErrPromptTooLong }

// window estimates requests against one step's context window. It is safe
// for concurrent use: parallel sub-agents share their step's window.
type window struct {
	size  int
	count func(string) int
	cal   tokens.Calibration

	mu sync.Mutex
	// counts caches local counts by text: a conversation only grows, so
	// each turn counts only what it added.
	counts map[string]int
}

func newWindow(size int, count func(string) int) *window {
	return &window{size: size, count: count, counts: map[string]int{}}
}

// scale is what a local count is multiplied by before it is compared with
// the window.
func (w *window) scale() float64 {
	s := 1 + windowMargin
	if r := w.cal.Summary().Ratio; r+calibrationSlack > s {
		s = min(r+calibrationSlack, maxScale)
	}
	return s
}

func (w *window) countOf(s string) int {
	if s == "" {
		return 0
	}
	w.mu.Lock()
	n, ok := w.counts[s]
	w.mu.Unlock()
	if ok {
		return n
	}
	n = w.count(s)
	w.mu.Lock()
	w.counts[s] = n
	w.mu.Unlock()
	return n
}

// local is the request's prompt counted locally: system, messages and tool
// schemas, with the per-message overhead.
func (w *window) local(req *llm.Request) int {
	n := requestOverhead + w.countOf(req.System)
	for _, m := range req.Messages {
		n += messageOverhead + w.countOf(m.PromptText())
	}
	for _, t := range req.Tools {
		n += w.countOf(t.PromptText())
	}
	return n
}

// prompt is the estimate of the request's prompt as the provider will
// count it: the local count with the margin.
func (w *window) prompt(req *llm.Request) int { return w.scaled(w.local(req)) }

func (w *window) scaled(n int) int { return int(math.Ceil(float64(n) * w.scale())) }

// toLocal turns a number of provider tokens into local ones.
func (w *window) toLocal(n int) int { return int(float64(n) / w.scale()) }

// fit returns the request to send: req itself when prompt and max_tokens
// fit the window; a copy with max_tokens lowered to what the window leaves
// when that is still at least minReplyTokens (or the max_tokens asked for,
// if smaller); an *overWindowError otherwise.
func (w *window) fit(req *llm.Request) (*llm.Request, error) {
	if w == nil || w.size <= 0 {
		return req, nil
	}
	p := w.prompt(req)
	if p+req.MaxTokens <= w.size {
		return req, nil
	}
	floor := min(minReplyTokens, req.MaxTokens)
	if floor <= 0 || p+floor > w.size {
		return nil, &overWindowError{prompt: p, reply: max(floor, 0), window: w.size}
	}
	out := *req
	out.MaxTokens = w.size - p
	return &out, nil
}

// replyReserve is what a request must keep free for its reply.
func (w *window) replyReserve(req *llm.Request) int {
	return min(minReplyTokens, max(req.MaxTokens, 0))
}

// observe relates a sent request's local count to the prompt the provider
// reported for it.
func (w *window) observe(req *llm.Request, u llm.Usage) {
	w.cal.Observe(int64(w.local(req)), u.PromptTokens())
}

// guard is the step's window, made on first use.
func (s *stepRun) guard() *window {
	s.winOnce.Do(func() { s.win = newWindow(s.windowBudget().Window, s.r.counter.Count) })
	return s.win
}

// windowBudget is the budget whose window and threshold bound the step's
// requests and tool results.
func (s *stepRun) windowBudget() budget.Budget { return s.model().budget }

// overflowReset is the reset of a session whose next request does not fit
// the window, by baton's count or by the provider's answer: forced at once,
// with the ledger entry baton composes, never a fatal error.
func (s *stepRun) overflowReset(ctx context.Context, req *llm.Request, cause error) (*llm.Request, error) {
	w := s.guard()
	p := w.prompt(req)
	d := s.session.Forced(0)
	d.Projected = max(d.Projected, p)
	if d.Window > 0 {
		d.Fraction = float64(d.Projected) / float64(d.Window)
	}
	s.r.event(s.stepEvent(runlog.Event{Type: runlog.ThresholdCrossed, ProjectedTokens: d.Projected, ThresholdTokens: d.Threshold,
		WindowTokens: d.Window, ContextFraction: d.Fraction, Note: cause.Error()}))
	return s.reset(ctx, req, d, runlog.ReasonHardLimit, cause)
}

// composed is the entry baton writes itself for a reset within the step.
func (s *stepRun) composed(phase string) (ledger.Entry, error) {
	e, err := s.r.composeEntry(phase, phase, s.skillName, s)
	if err != nil {
		return ledger.Entry{}, err
	}
	e.NextStep = fmt.Sprintf("continue skill %s where the previous session stopped", s.skillName)
	return e, nil
}

// tooLongHint says what to do when even a fresh session's first request
// does not fit: the step's own context is too large for the window.
func tooLongHint(err error) error {
	if !errors.Is(err, llm.ErrPromptTooLong) {
		return err
	}
	return fmt.Errorf("the step's fresh context does not fit the window (declare fewer or smaller files, or raise window_tokens): %w", err)
}
