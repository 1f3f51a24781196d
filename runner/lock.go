package runner

import (
	"github.com/baton-dev/baton/internal/runlock"
	"github.com/baton-dev/baton/runlog"
)

// lockWorkspace takes the workspace for this run, without waiting: a second
// `baton run` or `baton resume` on a live workspace would pay for the same
// calls again and write the same state.yaml and run log. It comes before
// anything is written; release runs when Run or Resume returns. A workspace
// another process holds is a *runlock.HeldError naming the holder.
func (r *runner) lockWorkspace() (release func(), err error) {
	l, err := runlock.Acquire(r.ws.Root(), runlock.Holder{})
	if err != nil {
		return nil, err
	}
	r.lock = l
	return func() {
		if err := l.Release(); err != nil {
			r.warn(err.Error())
		}
	}, nil
}

// stamp marks an event with the session of the process that writes it, so
// that `baton ledger lint` can tell two processes' events apart, and tells
// the lock's info file the run id once the run has one.
func (r *runner) stamp(e *runlog.Event) {
	if r.lock == nil {
		return
	}
	h := r.lock.Holder()
	e.Session = h.Session
	if (e.Type == runlog.RunStart || e.Type == runlog.Resume) && h.Run != e.Run {
		if err := r.lock.SetRun(e.Run); err != nil {
			r.warn(err.Error())
		}
	}
}
