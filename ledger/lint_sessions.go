package ledger

import (
	"fmt"

	"github.com/baton-dev/baton/runlog"
)

// RuleInterleavedSessions: one run's log holds the events of two baton
// processes running it at once (a second `baton run` or `baton resume` on
// a live workspace): calls paid twice, decisions recorded twice, files
// last-writer-wins.
const RuleInterleavedSessions = "interleaved-sessions"

// lintSessions finds a run written by two processes at once. Events that
// carry a session show it directly: after a run_start or resume hands the
// run to a new session, an event of an earlier one is another process
// still at work. Logs without sessions show it by their shape: a step
// started again while still running with no resume between, a step ended
// twice, anything after run_end. A crash followed by a resume is none of
// these: the resume abandons the steps the dead process left open. The
// first sign is reported; what follows it is the same mix-up.
func lintSessions(id string, events []runlog.Event) []Finding {
	flag := func(e runlog.Event, format string, a ...any) []Finding {
		return []Finding{{Rule: RuleInterleavedSessions, Where: evWhere(e),
			Message: fmt.Sprintf("run %s %s: two baton processes ran it at once", id, fmt.Sprintf(format, a...))}}
	}
	var (
		current            string             // the session of the latest run_start or resume
		retired            = map[string]int{} // sessions a later one took over from, and where
		open               = map[string]int{} // steps started and not ended since the latest handover
		endedOK            = map[string]int{}
		started, ended     bool
		startedAt, endedAt int
	)
	for _, e := range events {
		if ended {
			return flag(e, "has a %s event after its run_end at line %d", e.Type, endedAt)
		}
		if e.Session != "" && e.Session != current && e.Type != runlog.RunStart && e.Type != runlog.Resume {
			if at, ok := retired[e.Session]; ok {
				return flag(e, "has a %s event of session %s after session %s took the run over at line %d", e.Type, e.Session, current, at)
			}
			// A session not seen before is a resume getting ready (it may
			// write a ledger entry before its resume event).
		}
		switch e.Type {
		case runlog.RunStart:
			if started {
				return flag(e, "starts again (it started at line %d)", startedAt)
			}
			started, startedAt = true, e.Line
		case runlog.Resume:
		case runlog.StepStart:
			if at, ok := open[e.Step]; ok {
				return flag(e, "starts step %s while it is still running (started at line %d, no resume between)", e.Step, at)
			}
			open[e.Step] = e.Line
			continue
		case runlog.StepEnd:
			if at, ok := endedOK[e.Step]; ok && e.Status == "ok" {
				return flag(e, "ends step %s a second time (it ended at line %d)", e.Step, at)
			}
			delete(open, e.Step)
			if e.Status == "ok" {
				endedOK[e.Step] = e.Line
			}
			continue
		case runlog.RunEnd:
			ended, endedAt = true, e.Line
			continue
		default:
			continue
		}
		// A run_start or resume: the run changes hands, and what the
		// previous session left open is abandoned.
		if e.Session != "" {
			if at, ok := retired[e.Session]; ok {
				return flag(e, "is taken over again by session %s, which another took it from at line %d", e.Session, at)
			}
			if current != "" && current != e.Session {
				retired[current] = e.Line
			}
			current = e.Session
		}
		clear(open)
	}
	return nil
}
