package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/orchestrate"
)

// askProgress turns orchestrate's events into notifications/progress for
// a request that carries a progress token. The count goes up by one with
// every notification (the protocol wants it to increase); the total is
// known once the plan is: plan, assemble, a start and an end per delegated
// subtask, and the synthesis's start and end. Map-reduce calls and retries
// are not known ahead and raise the total as they come.
type askProgress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any

	mu        sync.Mutex // events come from several goroutines at once
	sent      int
	total     int
	delegated int
	counting  bool // in assemble: the subtask events are counted, not sent
}

func newAskProgress(ctx context.Context, req *mcp.CallToolRequest) *askProgress {
	p := &askProgress{ctx: ctx}
	if req != nil && req.Params != nil && req.Session != nil {
		p.ss, p.token = req.Session, req.Params.GetProgressToken()
	}
	return p
}

func (p *askProgress) event(e orchestrate.Event) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.Phase == "assemble" && e.Index >= 0:
		if e.Status == "queued" {
			p.delegated++
		}
		return
	case e.Phase == "assemble":
		p.counting = true
		p.sendLocked("assembling the slices (no model call)")
		return
	}
	if p.counting {
		// The plan is whole now: every event to come is known.
		p.counting = false
		p.total = p.sent + 2*p.delegated + 2
	}
	if e.Phase == "map" || e.Phase == "reduce" {
		p.extraLocked()
	}
	p.sendLocked(eventMessage(e))
}

// note sends a message outside the phases (a retry notice).
func (p *askProgress) note(msg string) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.extraLocked()
	p.sendLocked(msg)
}

// extraLocked counts a notification the total did not foresee, so that the
// last one still lands on the total and none reaches it early.
func (p *askProgress) extraLocked() {
	if p.total > 0 {
		p.total++
	}
}

func (p *askProgress) sendLocked(msg string) {
	p.sent++
	if p.total > 0 && p.sent > p.total {
		p.total = p.sent
	}
	// A host that went away only loses its progress; the run goes on
	// until ctx says otherwise.
	_ = p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token,
		Progress: float64(p.sent), Total: float64(p.total), Message: msg})
}

func eventMessage(e orchestrate.Event) string {
	task := shorten(e.Message, 80)
	switch e.Phase {
	case "plan":
		return "planning"
	case "dispatch":
		switch e.Status {
		case "running":
			return fmt.Sprintf("subtask %d started: %s", e.Index+1, task)
		case "failed":
			return fmt.Sprintf("subtask %d failed: %s", e.Index+1, task)
		default:
			return fmt.Sprintf("subtask %d %s: %s", e.Index+1, e.Status, task)
		}
	case "map", "reduce":
		return fmt.Sprintf("subtask %d %s: %s", e.Index+1, e.Phase, task)
	case "synthesis":
		if e.Status == "ok" {
			return "synthesis done"
		}
		return "synthesising the answer"
	}
	return strings.TrimSpace(e.Phase + " " + e.Status + " " + task)
}

// shorten keeps a progress message to one short line.
func shorten(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
