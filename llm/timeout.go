package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// Defaults for the HTTP client the provider adapters use when given none,
// and for baton's --call-timeout and --idle-timeout flags.
const (
	// DefaultCallTimeout bounds one HTTP exchange with a provider, headers
	// and body: a call that is still running after it is abandoned and, as a
	// transport failure, retried.
	DefaultCallTimeout = 5 * time.Minute
	// DefaultIdleTimeout bounds the silence of a streamed response: no
	// event for that long and the stream counts as stalled.
	DefaultIdleTimeout = 60 * time.Second
)

var (
	// ErrCallTimeout is matched (errors.Is) by the error of a call that
	// outlived its call timeout.
	ErrCallTimeout = errors.New("the call took too long")
	// ErrStreamStalled is matched by the error of a stream that delivered no
	// event for the idle timeout.
	ErrStreamStalled = errors.New("the stream stalled")
	// ErrIncomplete is matched by the error of a response that ended before
	// the provider said it was complete (no message_stop, no finish_reason).
	ErrIncomplete = errors.New("the response ended before it was complete")
)

// TimeoutError is a call baton abandoned on its own deadline, as opposed to
// one the caller cancelled. It is a net.Error whose Timeout is true, so the
// adapters classify it as a transport failure: a *ProviderError with
// StatusCode 0, which the retry policy retries.
type TimeoutError struct {
	// Stalled is true for the idle timeout of a stream, false for the call
	// timeout.
	Stalled bool
	// After is the timeout that expired.
	After time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Stalled {
		return fmt.Sprintf("no content for %s; the stream stalled", e.After)
	}
	return fmt.Sprintf("the call took longer than %s", e.After)
}

// Is makes errors.Is match ErrStreamStalled or ErrCallTimeout.
func (e *TimeoutError) Is(target error) bool {
	if e.Stalled {
		return target == ErrStreamStalled
	}
	return target == ErrCallTimeout
}

// Timeout reports true, as net.Error asks of a timeout.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true: the same call may well succeed when sent again.
func (e *TimeoutError) Temporary() bool { return true }

// NewHTTPClient returns the client baton's adapters use: the default
// transport with a call timeout and, for event streams, an idle timeout. A
// timeout of 0 or less leaves that limit off.
func NewHTTPClient(call, idle time.Duration) *http.Client {
	return &http.Client{Transport: CallTimeoutTransport(IdleTimeoutTransport(http.DefaultTransport, idle), call)}
}

// CallTimeoutTransport bounds every exchange made through base, from sending
// the request to the last byte of the body, by d. An exchange over time
// fails with a *TimeoutError (ErrCallTimeout). d <= 0 returns base as it is;
// a nil base is http.DefaultTransport.
//
// The deadline lives in the transport rather than in the retry policy so
// that it covers the HTTP exchange only: a call waiting for a concurrency
// slot or rate budget (llm.Limited) has not started and must not time out.
func CallTimeoutTransport(base http.RoundTripper, d time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if d <= 0 {
		return base
	}
	return &callTransport{base: base, d: d}
}

type callTransport struct {
	base http.RoundTripper
	d    time.Duration
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	cause := &TimeoutError{After: t.d}
	ctx, cancel := context.WithTimeoutCause(req.Context(), t.d, cause)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, ownErr(ctx, req.Context(), cause, err)
	}
	resp.Body = &guardedBody{rc: resp.Body, ctx: ctx, parent: req.Context(), cause: cause, stop: cancel}
	return resp, nil
}

// ownErr is cause when ctx ended because of it and the caller's context is
// still live, err otherwise: the caller's cancellation stays a cancellation.
func ownErr(ctx, parent context.Context, cause, err error) error {
	if parent.Err() == nil && context.Cause(ctx) == cause {
		return cause
	}
	return err
}

// guardedBody is a response body whose request context baton may end on
// its own (cause); its reads then fail with cause rather than with the
// transport's "context canceled", which would look like the caller's.
type guardedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	parent context.Context
	cause  error
	stop   func()
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = ownErr(b.ctx, b.parent, b.cause, err)
	}
	return n, err
}

func (b *guardedBody) Close() error {
	err := b.rc.Close()
	b.stop()
	return err
}

// IdleTimeoutTransport ends a text/event-stream response through base that
// delivers no event for idle: its body then fails with a *TimeoutError
// (ErrStreamStalled). Only data: and event: lines count as content; ":"
// comment lines, which proxies and servers send to keep a connection open,
// and blank lines do not, so a stream kept alive by pings alone still
// stalls. Other responses pass untouched. idle <= 0 returns base as it is;
// a nil base is http.DefaultTransport.
func IdleTimeoutTransport(base http.RoundTripper, idle time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if idle <= 0 {
		return base
	}
	return &idleTransport{base: base, idle: idle}
}

type idleTransport struct {
	base http.RoundTripper
	idle time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	cause := &TimeoutError{Stalled: true, After: t.idle}
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	stop := func() { cancel(nil) }
	if !isEventStream(resp) {
		// The context must live until the body is read, so it ends on
		// Close, as the request's own would.
		resp.Body = &guardedBody{rc: resp.Body, ctx: ctx, parent: req.Context(), cause: cause, stop: stop}
		return resp, nil
	}
	ib := &idleBody{}
	ib.timer = time.AfterFunc(t.idle, func() { cancel(cause) })
	ib.idle = t.idle
	ib.guardedBody = guardedBody{rc: resp.Body, ctx: ctx, parent: req.Context(), cause: cause,
		stop: func() { ib.timer.Stop(); stop() }}
	resp.Body = ib
	return resp, nil
}

func isEventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// idleBody restarts its timer whenever bytes of an event line arrive.
type idleBody struct {
	guardedBody
	idle  time.Duration
	timer *time.Timer
	lines sseLines // used by Read alone, which is never called concurrently
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.guardedBody.Read(p)
	if b.lines.content(p[:n]) && b.ctx.Err() == nil {
		b.timer.Reset(b.idle)
	}
	return n, err
}

// sseLines follows the line structure of an event stream across reads, to
// tell event lines from comments.
type sseLines struct {
	midLine bool    // a line has started and not ended
	decided bool    // the current line's kind is known
	isEvent bool    // the current line is a data: or event: line
	name    [6]byte // the field name read so far, while undecided
	n       int
}

// content reports whether p holds any byte of a data: or event: line.
func (s *sseLines) content(p []byte) bool {
	progress := false
	for _, c := range p {
		if c == '\n' || c == '\r' {
			if s.midLine && !s.decided {
				s.decide() // a bare field name: "data" alone is an empty data line
			}
			if s.isEvent {
				progress = true
			}
			s.midLine, s.decided, s.isEvent, s.n = false, false, false, 0
			continue
		}
		s.midLine = true
		if !s.decided {
			if c == ':' || s.n == len(s.name) {
				s.decide()
			} else {
				s.name[s.n] = c
				s.n++
			}
		}
		if s.isEvent {
			progress = true
		}
	}
	return progress
}

func (s *sseLines) decide() {
	name := string(s.name[:s.n])
	s.decided, s.isEvent = true, name == "data" || name == "event"
}
