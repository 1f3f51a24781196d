package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// answerStream writes the synthesis to stdout as it arrives (ask --stream
// in text output). Before the first piece it calls before, which stops the
// live progress block: the block redraws by moving the cursor up, which
// would write over an answer printed below it on the same terminal.
//
// A retried synthesis starts its text again (llm.Request.OnRestart): the
// partial answer stays where it is, stderr says it was cut off, and the
// whole answer follows on a line of its own. What stdout ends with is the
// answer of the attempt that succeeded; a reader of the pipe tells the
// attempts apart with --output stream-json, whose restart line marks the
// point.
type answerStream struct {
	mu      sync.Mutex
	w       io.Writer
	stderr  io.Writer
	before  func()
	started bool
	n       int  // bytes written since the last restart
	last    byte // the last byte written
}

func (a *answerStream) text(delta string) {
	if delta == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		a.started = true
		if a.before != nil {
			a.before()
		}
	}
	// A write error (a closed pipe) must not end a paid run: the record
	// keeps the answer.
	_, _ = io.WriteString(a.w, delta)
	a.n += len(delta)
	a.last = delta[len(delta)-1]
}

func (a *answerStream) restart() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		return
	}
	a.endLine()
	fmt.Fprintf(a.stderr, "baton: the answer was cut off after %d bytes; it is printed again from the start\n", a.n)
	a.n = 0
}

// endLine ends a partial last line, so that what follows starts a line of
// its own. The caller holds a.mu.
func (a *answerStream) endLine() {
	if a.n > 0 && a.last != '\n' {
		_, _ = io.WriteString(a.w, "\n")
		a.last = '\n'
	}
}

// finish ends the answer's last line and reports whether any of the
// answer was printed: then it is not printed again.
func (a *answerStream) finish() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endLine()
	return a.n > 0
}

// retryNotice wraps a retry notice so that it starts on a line of its own
// when it interrupts the answer on a terminal. next is the notice without
// a stream (the live block's); nil prints the notice on stderr.
func (a *answerStream) retryNotice(next func(int, time.Duration, error)) func(int, time.Duration, error) {
	return func(attempt int, wait time.Duration, err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.endLine()
		if next != nil {
			next(attempt, wait, err)
			return
		}
		fmt.Fprintf(a.stderr, "baton: attempt %d failed (%s); retrying in %s\n", attempt, oneLineErr(err), wait.Round(time.Millisecond))
	}
}
