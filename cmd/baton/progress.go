package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/orchestrate"
)

type askPhase struct{ event, label string }

// askPhases are ask's phases in the order they run, with the words the
// header shows for them.
var askPhases = []askPhase{
	{"plan", "plan"}, {"assemble", "assemble"}, {"dispatch", "dispatch"}, {"synthesis", "synthesise"},
}

// progress draws ask's live block on a terminal: a header naming the
// phases in order, then one row per subtask in plan order. It redraws the
// whole block on every event: with at most a few dozen subtasks that is
// cheap, and it needs no terminal library beyond two ANSI sequences.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	phase int  // index in askPhases of the phase running; -1 before the first
	done  bool // the current phase finished (only synthesis says so)
	rows  map[int]askRow
	// delegated, finished and failed count the dispatch work for the
	// header; retries counts retry notices.
	delegated, finished, failed, retries int
	drawn                                int
	// width reports the terminal's width in columns now: it is asked on
	// every redraw, so a narrowed window gets rows cut to its new width.
	width  func() int
	closed bool
	// above holds whole lines (retry notices) to print above the block at
	// the next redraw, where they stay.
	above []string
}

type askRow struct{ status, text string }

// newProgress draws on w for a terminal of a fixed width.
func newProgress(w io.Writer, width int) *progress {
	return newLiveProgress(w, func() int { return width })
}

// newLiveProgress draws on w; width reports the terminal's current width
// (20 or less when unknown, which is taken as 80).
func newLiveProgress(w io.Writer, width func() int) *progress {
	return &progress{w: w, rows: map[int]askRow{}, width: width, phase: -1}
}

func (p *progress) termWidth() int {
	if w := p.width(); w > 20 {
		return w
	}
	return 80
}

func (p *progress) event(e orchestrate.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	// An event of a later phase means the earlier ones are over: ask
	// announces dispatch only through its subtasks' events.
	if i := slices.IndexFunc(askPhases, func(ph askPhase) bool { return ph.event == e.Phase }); i > p.phase {
		p.phase, p.done = i, false
	}
	if e.Index < 0 {
		p.done = e.Status == "ok"
	} else {
		prev, seen := p.rows[e.Index]
		if e.Status == "queued" && !seen {
			p.delegated++
		}
		switch e.Status {
		case "ok", "failed":
			if prev.status != "ok" && prev.status != "failed" && prev.status != "self" {
				p.finished++
				if e.Status == "failed" {
					p.failed++
				}
			}
		}
		p.rows[e.Index] = askRow{status: e.Status, text: clean(e.Message)}
	}
	p.redraw()
}

// header is the first row: the phases in order, each marked done (✓),
// running (…) or to come (no mark), with dispatch's count and the retries.
func (p *progress) header() string {
	var parts []string
	for i, ph := range askPhases {
		s := ph.label
		switch {
		case i < p.phase || (i == p.phase && p.done):
			s += " ✓"
		case i == p.phase && (ph.event != "dispatch" || p.delegated == 0):
			s += " …"
		}
		if ph.event == "dispatch" && p.phase >= i && p.delegated > 0 {
			s += fmt.Sprintf(" %d/%d", p.finished-p.failed, p.delegated)
			if p.failed > 0 {
				s += fmt.Sprintf(", %d failed", p.failed)
			}
		}
		parts = append(parts, s)
	}
	h := "ask: " + strings.Join(parts, " › ")
	switch {
	case p.retries == 1:
		h += " — 1 retry"
	case p.retries > 1:
		h += fmt.Sprintf(" — %d retries", p.retries)
	}
	return h
}

func (p *progress) row(i int, r askRow) string {
	mark, word := map[string]string{"queued": "·", "self": "=", "running": "…", "ok": "✓", "failed": "✗", "retrying": "↻", "skipped": "-"}[r.status], r.status
	if r.status == "self" {
		word = "self-answered"
	}
	return fmt.Sprintf("%s subtask %d %s: %s", mark, i+1, word, r.text)
}

func (p *progress) redraw() {
	var b strings.Builder
	width := p.termWidth()
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\033[%dA", p.drawn)
	}
	for _, line := range p.above {
		b.WriteString(clearLine + fitWidth(line, width) + "\n")
	}
	p.above = nil
	rows := []string{p.header()}
	idx := make([]int, 0, len(p.rows))
	for i := range p.rows {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		rows = append(rows, p.row(i, p.rows[i]))
	}
	for _, row := range rows {
		b.WriteString(clearLine)
		b.WriteString(fitWidth(row, width))
		b.WriteByte('\n')
	}
	p.drawn = len(rows)
	io.WriteString(p.w, b.String())
}

// retry is the model's retry notice (modelFlags.onRetry): on a terminal
// the block is redrawn below it, so the notice is neither lost nor drawn
// over, and the header counts it.
func (p *progress) retry(attempt int, wait time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("baton: attempt %d failed (%s); retrying in %s", attempt, clean(oneLineErr(err)), wait.Round(time.Millisecond))
	if p.closed {
		fmt.Fprintln(p.w, line)
		return
	}
	p.retries++
	p.above = append(p.above, line)
	p.redraw()
}

// clearLine returns the cursor to the start of its line and erases it.
const clearLine = "\r\033[2K"

// fitWidth cuts row to fit a terminal of the given width in columns,
// leaving the last column free so that a full row never wraps. It cuts at
// a rune boundary and marks the cut with "…".
func fitWidth(row string, width int) string {
	if displayWidth(row) <= width-1 {
		return row
	}
	room := max(width-2, 0) // one column for "…"
	used := 0
	for i, r := range row {
		w := runeWidth(r)
		if used+w > room {
			return row[:i] + "…"
		}
		used += w
	}
	return row
}

// close stops drawing; the last state stays on screen.
func (p *progress) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
