package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/orchestrate"
)

// progress draws one live line per subtask on a terminal. It redraws the
// whole block on every event: with at most a few dozen subtasks that is
// cheap, and it needs no terminal library beyond two ANSI sequences.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	phase  string
	lines  map[int]string
	order  []int
	drawn  int
	width  int
	closed bool
	// above holds whole lines (retry notices) to print above the block at
	// the next redraw, where they stay.
	above []string
}

func newProgress(w io.Writer, width int) *progress {
	if width <= 20 {
		width = 80
	}
	return &progress{w: w, lines: map[int]string{}, width: width}
}

func (p *progress) event(e orchestrate.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if e.Index < 0 {
		p.phase = fmt.Sprintf("%s: %s", e.Phase, e.Status)
	} else {
		if _, ok := p.lines[e.Index]; !ok {
			p.order = append(p.order, e.Index)
		}
		mark := map[string]string{"running": "…", "ok": "✓", "failed": "✗", "retrying": "↻", "skipped": "-"}[e.Status]
		p.lines[e.Index] = fmt.Sprintf("%s subtask %d %s: %s", mark, e.Index+1, e.Status, e.Message)
	}
	p.redraw()
}

func (p *progress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\033[%dA", p.drawn)
	}
	for _, line := range p.above {
		b.WriteString(clearLine + fitWidth(line, p.width) + "\n")
	}
	p.above = nil
	rows := append([]string{p.phase}, nil...)
	for _, i := range p.order {
		rows = append(rows, p.lines[i])
	}
	for _, row := range rows {
		b.WriteString(clearLine)
		b.WriteString(fitWidth(row, p.width))
		b.WriteByte('\n')
	}
	p.drawn = len(rows)
	io.WriteString(p.w, b.String())
}

// retry is the model's retry notice (modelFlags.onRetry): on a terminal
// the block is redrawn below it, so the notice is neither lost nor drawn
// over.
func (p *progress) retry(attempt int, wait time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("baton: attempt %d failed (%s); retrying in %s", attempt, clean(oneLineErr(err)), wait.Round(time.Millisecond))
	if p.closed {
		fmt.Fprintln(p.w, line)
		return
	}
	p.above = append(p.above, line)
	p.redraw()
}

// clearLine returns the cursor to the start of its line and erases it.
const clearLine = "\r\033[2K"

// fitWidth cuts row to fit a terminal of the given width, leaving the last
// column free so that a full row never wraps.
func fitWidth(row string, width int) string {
	if r := []rune(row); len(r) > width-1 {
		return string(r[:max(width-2, 0)]) + "…"
	}
	return row
}

// close stops drawing; the last state stays on screen.
func (p *progress) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
