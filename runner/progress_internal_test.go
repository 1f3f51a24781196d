package runner

import (
	"strings"
	"sync"
	"testing"
)

// An observer that stops taking events holds at most progressQueue of
// them: the rest are dropped and counted, and send never waits.
func TestObserverQueueIsBounded(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	got := 0
	o := newObserver(func(ProgressEvent) {
		<-release
		mu.Lock()
		got++
		mu.Unlock()
	})
	const sent = 10 * progressQueue
	for i := range sent {
		o.send(ProgressEvent{Kind: ProgressTurnStart, Turn: i})
	}
	close(release)
	warns := o.close()
	mu.Lock()
	defer mu.Unlock()
	// One event may be in the observer's hands when the queue fills.
	if got < progressQueue || got > progressQueue+1 {
		t.Errorf("delivered %d events, want the queue's %d (+1 in flight)", got, progressQueue)
	}
	if want := sent - got; len(warns) != 1 || !strings.Contains(warns[0], "progress events were not shown") || o.dropped != want {
		t.Errorf("warnings %q, dropped %d; want one warning for %d dropped", warns, o.dropped, want)
	}
	o.send(ProgressEvent{Kind: ProgressStepStart}) // after close: ignored, no panic
	if w := o.close(); w != nil {
		t.Errorf("a second close warned again: %q", w)
	}
}

// A nil observer (no Config.Progress) costs nothing and never fails.
func TestNilObserver(t *testing.T) {
	o := newObserver(nil)
	o.send(ProgressEvent{Kind: ProgressStepStart})
	if w := o.close(); w != nil {
		t.Errorf("close of a nil observer: %q", w)
	}
}
