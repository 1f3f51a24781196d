package dbosengine

import (
	"context"
	"sync"
	"time"

	"github.com/baton-dev/baton/engine"
)

// One poller per engine reads the records of every item some caller waits
// for, in one query per poll interval. An ask fans out each sub-agent call
// as its own wait, so polling per wait would cost the database one query per
// call in flight per interval (2,000 a second for 200 calls at 100 ms).

// ended is one item's outcome as the poller hands it to a waiter. pollErr
// marks a failure to read the records, which ends every wait.
type ended struct {
	id      string
	out     []byte
	err     error
	pollErr bool
}

// waiters is the set of items waited for, each with the channels of the
// waits that want it.
type waiters struct {
	mu      sync.Mutex
	byID    map[string][]chan ended
	polling bool
}

// await waits until each of ids has ended, calling done with each one's
// output or error as it ends. It returns ctx's error, ErrClosed, or the
// error reading the records, if that comes first.
func (e *Engine) await(ctx context.Context, ids []string, done func(id string, out []byte, err error)) error {
	if len(ids) == 0 {
		return nil
	}
	// Buffered for every id, so the poller never blocks on a waiter.
	ch := make(chan ended, len(ids))
	e.wait.register(ids, ch, func() { go e.poller() })
	defer e.wait.unregister(ids, ch)
	for left := len(ids); left > 0; {
		select {
		case r := <-ch:
			if r.pollErr {
				return r.err
			}
			done(r.id, r.out, r.err)
			left--
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-e.stop.Done():
			return engine.ErrClosed
		}
	}
	return nil
}

// register adds ch as a waiter for ids and calls start when no poller runs.
func (w *waiters) register(ids []string, ch chan ended, start func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.byID = map[string][]chan ended{}
	}
	for _, id := range ids {
		w.byID[id] = append(w.byID[id], ch)
	}
	if !w.polling {
		w.polling = true
		start()
	}
}

// unregister removes ch from the ids it still waits for.
func (w *waiters) unregister(ids []string, ch chan ended) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		chs := w.byID[id]
		for i, c := range chs {
			if c == ch {
				chs = append(chs[:i], chs[i+1:]...)
				break
			}
		}
		if len(chs) == 0 {
			delete(w.byID, id)
		} else {
			w.byID[id] = chs
		}
	}
}

// pending lists the ids waited for, or stops the poller (reporting false)
// when there are none: the next register starts another.
func (w *waiters) pending() ([]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.byID) == 0 {
		w.polling = false
		return nil, false
	}
	ids := make([]string, 0, len(w.byID))
	for id := range w.byID {
		ids = append(ids, id)
	}
	return ids, true
}

// deliver hands r to every wait for r.id and forgets the id; a poll error
// goes to every wait.
func (w *waiters) deliver(r ended) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.pollErr {
		for id, chs := range w.byID {
			for _, c := range chs {
				select {
				case c <- ended{id: id, err: r.err, pollErr: true}:
				default: // it already holds an outcome it has not read
				}
			}
		}
		return
	}
	for _, c := range w.byID[r.id] {
		c <- r
	}
	delete(w.byID, r.id)
}

// poller reads the waited-for records every poll interval until nothing is
// waited for or the engine closes.
func (e *Engine) poller() {
	tick := time.NewTicker(e.poll)
	defer tick.Stop()
	for {
		ids, ok := e.wait.pending()
		if !ok {
			return
		}
		st, err := e.statuses(ids)
		if err != nil && e.stop.Err() == nil {
			e.wait.deliver(ended{err: err, pollErr: true})
		}
		for id, s := range st {
			if terminal(s) {
				out, werr := e.result(id, s)
				e.wait.deliver(ended{id: id, out: out, err: werr})
			}
		}
		select {
		case <-tick.C:
		case <-e.stop.Done():
			e.wait.mu.Lock()
			e.wait.polling = false
			e.wait.mu.Unlock()
			return
		}
	}
}
