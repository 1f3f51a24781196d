package llmtest

import (
	"context"
	"fmt"
	"time"
)

// FaultMode says how a streamed reply goes wrong.
type FaultMode int

const (
	// FaultNone is a stream that runs to its end.
	FaultNone FaultMode = iota
	// FaultEnd ends the body cleanly after StreamFault.After events, as a
	// proxy or a server that gave up would: no error, just no more events
	// and no end marker.
	FaultEnd
	// FaultCutLine ends the body cleanly halfway through the data line of
	// the event after StreamFault.After events.
	FaultCutLine
	// FaultStall stops sending after StreamFault.After events and holds the
	// connection open until the client goes away (or the server closes),
	// sending ": ping" comment lines every StreamFault.PingEvery when that
	// is set.
	FaultStall
	// FaultNoEnd sends the whole reply but leaves out how the stream says it
	// is complete: message_stop (Anthropic); the finish_reason chunk, the
	// usage chunk and [DONE] (OpenAI).
	FaultNoEnd
)

// StreamFault scripts a streamed reply going wrong. It applies only to
// requests that asked to stream; JSON replies ignore it. The server records
// the request with the usage of the whole scripted reply, as a provider that
// started generating would still bill it.
type StreamFault struct {
	Mode FaultMode
	// After is how many events are sent before the fault (FaultEnd,
	// FaultCutLine, FaultStall). An Anthropic event is one event: line
	// and its data; an OpenAI event is one data: chunk.
	After int
	// PingEvery is the interval of ": ping" comments during a FaultStall; 0
	// sends nothing at all.
	PingEvery time.Duration
}

// CutAfter is r streamed with its body ending cleanly after n events.
func CutAfter(n int, r Reply) Reply {
	r.Fault = StreamFault{Mode: FaultEnd, After: n}
	return r
}

// CutMidLine is r streamed with its body ending halfway through the data
// line of the event after n events.
func CutMidLine(n int, r Reply) Reply {
	r.Fault = StreamFault{Mode: FaultCutLine, After: n}
	return r
}

// StallAfter is r streamed with nothing more sent after n events, the
// connection held open until the client gives up.
func StallAfter(n int, r Reply) Reply {
	r.Fault = StreamFault{Mode: FaultStall, After: n}
	return r
}

// PingForever is a streamed reply that sends nothing but ": ping" comment
// lines, one every d, until the client gives up.
func PingForever(d time.Duration) Reply {
	return Reply{Fault: StreamFault{Mode: FaultStall, PingEvery: d}}
}

// NoEnd is r streamed without its end marker (see FaultNoEnd).
func NoEnd(r Reply) Reply {
	r.Fault = StreamFault{Mode: FaultNoEnd}
	return r
}

// faultBefore applies s.fault, if it is due, before an event is written. It
// reports whether the stream is over: every later write is then dropped.
func (s *sse) faultBefore(name string, data []byte) bool {
	if s.dead {
		return true
	}
	f := s.fault
	if f.Mode == FaultNone || f.Mode == FaultNoEnd || s.events < f.After {
		return false
	}
	s.dead = true
	switch f.Mode {
	case FaultCutLine:
		if name != "" {
			fmt.Fprintf(s.w, "event: %s\n", name)
		}
		fmt.Fprintf(s.w, "data: %s", data[:len(data)/2])
		s.flush()
	case FaultStall:
		s.stall(s.ctx, f.PingEvery)
	}
	return true
}

// stall holds the stream open until ctx ends, pinging every d when d > 0.
func (s *sse) stall(ctx context.Context, d time.Duration) {
	if d <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
				return
			}
			s.flush()
		}
	}
}

// noEnd reports whether the stream's end marker is to be left out.
func (s *sse) noEnd() bool { return s.fault.Mode == FaultNoEnd }
