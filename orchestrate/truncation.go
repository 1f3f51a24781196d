package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/llm"
)

// A reply cut at its max_tokens reads like an answer but is only its start.
// The synthesis and every reduce request are therefore checked: a cut reply
// is asked for once more with a larger limit, where the model's window
// leaves room for it (the request is checked against the window as any
// other, and counted and booked as a call of its own); when there is no
// room, or the second reply is cut too, or it fails, the run keeps the
// longest reply it has and ends partial, with a warning naming the phase
// and the limit.

// cutRetryFactor is how many times its first limit a cut reply is asked for
// again with: enough for an answer that ran a little long, and within the
// output limit of current models at baton's default limits.
const cutRetryFactor = 2

// ErrTruncated matches (errors.Is) a run whose answer, or a reply it was
// built from, was cut at its token limit. It matches ErrPartial too: the
// run produced an answer, but not a whole one.
var ErrTruncated = errors.New("a reply was cut at its token limit")

// partialError is the error of a run that produced an answer with gaps:
// failed subtasks, replies cut at their limit, or both.
type partialError struct {
	msg string
	cut bool
}

func (e *partialError) Error() string { return e.msg }

func (e *partialError) Is(target error) bool {
	return target == ErrPartial || (e.cut && target == ErrTruncated)
}

// partialResult is the run's error once the synthesis has answered: nil
// when nothing failed and nothing was cut.
func (r *run) partialResult() error {
	var parts []string
	if r.failed > 0 {
		parts = append(parts, fmt.Sprintf("%v: %d of %d delegated subtasks", ErrPartial, r.failed, r.delegated()))
	}
	r.mu.Lock()
	cuts := append([]string(nil), r.cuts...)
	r.mu.Unlock()
	if len(cuts) > 0 {
		parts = append(parts, "the answer is incomplete: "+strings.Join(cuts, "; "))
	}
	if len(parts) == 0 {
		return nil
	}
	return &partialError{msg: strings.Join(parts, "; "), cut: len(cuts) > 0}
}

// largerLimit is the max_tokens a request of n counted prompt tokens, cut
// at limit, is sent again with: cutRetryFactor times the limit, or as much
// as the window leaves beside the prompt and its margin; 0 when that is no
// more than limit.
func (r *run) largerLimit(model string, n, limit int) int {
	w := r.window(model)
	next := min(limit*cutRetryFactor, w.Tokens-n-margin(n))
	if next <= limit {
		return 0
	}
	return next
}

// uncut checks the reply to req (n counted prompt tokens) for a cut at its
// max_tokens and, when it was cut, asks once more through send with a
// larger limit. It returns the reply to use: the second one when it came
// back whole, otherwise the longer of the two, with the cut recorded so
// that the run ends partial. what names the phase in warnings.
func (r *run) uncut(what string, req *llm.Request, n int, resp *llm.Response, send func(*llm.Request) (*llm.Response, error)) *llm.Response {
	if !resp.Truncated() {
		return resp
	}
	limit := req.MaxTokens
	next := r.largerLimit(req.Model, n, limit)
	if next == 0 {
		w := r.window(req.Model)
		r.leftCut(what, fmt.Sprintf("%s was cut at its %d-token limit (max_tokens), and the %d-token window leaves no room for a larger one", what, limit, w.Tokens))
		return resp
	}
	again := *req
	again.MaxTokens = next
	if req.OnRestart != nil {
		// What was streamed of the cut reply is void: the reply
		// starts again.
		req.OnRestart()
	}
	second, err := send(&again)
	switch {
	case err != nil:
		r.leftCut(what, fmt.Sprintf("%s was cut at its %d-token limit (max_tokens), and the request again with %d failed (%s); the cut reply is kept", what, limit, next, r.errText(err)))
		r.restream(req, resp.Text)
		return resp
	case second.Truncated():
		r.leftCut(what, fmt.Sprintf("%s was cut at its %d-token limit (max_tokens), and again at %d", what, limit, next))
		return second
	}
	r.warnf("%s was cut at its %d-token limit (max_tokens); asked again with %d, and the reply came back whole", what, limit, next)
	return second
}

// uncutSub is uncut for a sub-agent's request, sent again through subCall
// so that the second request takes a call slot and is booked as a call of
// the same kind: in the accounting, the subtask's usage and its counters.
// part is what subCall names the piece of the slice by (map requests).
func (r *run) uncutSub(ctx context.Context, j *job, kind int, part, what string, req *llm.Request, n int, resp *llm.Response) *llm.Response {
	return r.uncut(what, req, n, resp, func(again *llm.Request) (*llm.Response, error) {
		return r.subCall(ctx, j, kind, part, func() (*llm.Request, int, error) {
			if kind == callWhole {
				// Map and reduce requests add their prompt in subCall.
				r.mu.Lock()
				r.rec.Subtasks[j.i].PromptTokens += n
				r.mu.Unlock()
			}
			return again, n, nil
		})
	})
}

// restream passes text on again as the whole streamed reply, after
// whatever a failed second request streamed was voided.
func (r *run) restream(req *llm.Request, text string) {
	if req.OnText == nil {
		return
	}
	if req.OnRestart != nil {
		req.OnRestart()
	}
	req.OnText(text)
}

// leftCut records a reply left cut: a warning with why, and a gap the run's
// error names (the run ends partial).
func (r *run) leftCut(what, why string) {
	r.warnf("%s; the answer is incomplete", why)
	r.mu.Lock()
	r.cuts = append(r.cuts, what+" was cut at its token limit")
	r.mu.Unlock()
}
