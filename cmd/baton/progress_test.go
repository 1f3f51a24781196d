package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/baton-dev/baton/orchestrate"
)

func TestProgressKeepsOneLinePerSubtask(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 60)
	p.event(orchestrate.Event{Index: -1, Phase: "dispatch", Status: "running"})
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "running", Message: "first"})
	p.event(orchestrate.Event{Index: 1, Phase: "dispatch", Status: "running", Message: strings.Repeat("long ", 40)})
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "ok", Message: "first"})
	p.close()
	p.event(orchestrate.Event{Index: 2, Phase: "dispatch", Status: "running", Message: "after close"})

	out := buf.String()
	if !strings.Contains(out, "\033[3A") {
		t.Fatalf("the last redraw did not move up over the three drawn lines: %q", out)
	}
	last := out[strings.LastIndex(out, "\033[3A"):]
	if !strings.Contains(last, "✓ subtask 1 ok: first") || !strings.Contains(last, "subtask 2 running") {
		t.Errorf("final frame = %q", last)
	}
	for _, line := range strings.Split(last, "\n") {
		if n := len([]rune(strings.TrimPrefix(line, "\r\033[2K"))); n > 60 {
			t.Errorf("line of %d runes exceeds the terminal width: %q", n, line)
		}
	}
	if strings.Contains(out, "after close") {
		t.Error("progress drew after close")
	}
}

// lastFrame returns the rows of the last redraw (which starts after the
// last cursor-up), without the line-clearing codes.
func lastFrame(t *testing.T, out string) []string {
	t.Helper()
	if loc := cursorUp.FindAllStringIndex(out, -1); len(loc) > 0 {
		out = out[loc[len(loc)-1][1]:]
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, strings.TrimPrefix(line, clearLine))
	}
	return rows
}

var cursorUp = regexp.MustCompile(`\x1b\[\d+A`)

// Defect: the block stayed on "assemble: running" through dispatch, never
// showed self-answered subtasks, and put rows in the order subtasks
// finished. The first row now names the four phases in order with the
// current one marked; rows follow the plan.
func TestAskProgressPhasesInOrderRowsInPlanOrder(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100)
	p.event(orchestrate.Event{Index: -1, Phase: "plan", Status: "running"})
	p.event(orchestrate.Event{Index: -1, Phase: "assemble", Status: "running"})
	p.event(orchestrate.Event{Index: 0, Phase: "assemble", Status: "self", Message: "Who wrote it?"})
	p.event(orchestrate.Event{Index: 1, Phase: "assemble", Status: "queued", Message: "Explain revenue"})
	p.event(orchestrate.Event{Index: 2, Phase: "assemble", Status: "queued", Message: "Summarise costs"})
	p.event(orchestrate.Event{Index: 2, Phase: "dispatch", Status: "running", Message: "Summarise costs"})
	p.event(orchestrate.Event{Index: 2, Phase: "dispatch", Status: "ok", Message: "Summarise costs"})
	rows := lastFrame(t, buf.String())
	want := []string{
		"ask: plan ✓ › assemble ✓ › dispatch 1/2 › synthesise",
		"= subtask 1 self-answered: Who wrote it?",
		"· subtask 2 queued: Explain revenue",
		"✓ subtask 3 ok: Summarise costs",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frame:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	p.event(orchestrate.Event{Index: 1, Phase: "dispatch", Status: "running", Message: "Explain revenue"})
	p.event(orchestrate.Event{Index: 1, Phase: "dispatch", Status: "failed", Message: "provider said no"})
	p.event(orchestrate.Event{Index: -1, Phase: "synthesis", Status: "running"})
	rows = lastFrame(t, buf.String())
	if rows[0] != "ask: plan ✓ › assemble ✓ › dispatch ✓ 1/2, 1 failed › synthesise …" || rows[2] != "✗ subtask 2 failed: provider said no" {
		t.Errorf("frame after synthesis starts:\n%s", strings.Join(rows, "\n"))
	}
	p.event(orchestrate.Event{Index: -1, Phase: "synthesis", Status: "ok"})
	if rows = lastFrame(t, buf.String()); !strings.HasSuffix(rows[0], "synthesise ✓") {
		t.Errorf("header after synthesis: %q", rows[0])
	}
}

// Defect: retries were not shown. Each notice stays above the block with
// its wait, and the header counts them.
func TestAskProgressShowsRetriesWithTheirWait(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100)
	p.event(orchestrate.Event{Index: 0, Phase: "assemble", Status: "queued", Message: "Explain"})
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "running", Message: "Explain"})
	p.retry(1, 2500*time.Millisecond, errors.New("429 Too Many Requests\nslow down"))
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "ok", Message: "Explain"})
	out := buf.String()
	notice := "baton: attempt 1 failed (429 Too Many Requests slow down); retrying in 2.5s\n"
	if strings.Count(out, notice) != 1 {
		t.Fatalf("the retry notice is not printed once, whole: %q", out)
	}
	rows := lastFrame(t, out)
	if !strings.Contains(rows[0], "1 retry") || strings.Contains(strings.Join(rows, "\n"), "attempt 1") {
		t.Errorf("last frame (notice above it, count in the header):\n%s", strings.Join(rows, "\n"))
	}
	// The block was redrawn below the notice: the frame after it moves up
	// over the block only, never over the notice.
	after := out[strings.Index(out, notice)+len(notice):]
	if !strings.Contains(after, "\033[2A") {
		t.Errorf("the block was not redrawn below the notice: %q", after)
	}
}

// Defect: rows wrapped mid-word. Every row fits the width in terminal
// columns (wide characters count two), cut at a rune boundary with "…",
// and text with a newline or an escape cannot break the block.
func TestAskProgressCutsEveryRowToTheWidth(t *testing.T) {
	var buf bytes.Buffer
	const width = 40
	p := newProgress(&buf, width)
	p.event(orchestrate.Event{Index: 0, Phase: "assemble", Status: "queued", Message: strings.Repeat("売上の説明", 10)})
	p.event(orchestrate.Event{Index: 1, Phase: "assemble", Status: "queued", Message: "line one\nline two\033[31m red " + strings.Repeat("word ", 20)})
	p.retry(1, time.Second, errors.New(strings.Repeat("ünïcödé ", 20)))
	out := buf.String()
	if strings.Contains(out, "\033[31m") {
		t.Error("an escape sequence from a message reached the terminal")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines {
		line = line[strings.LastIndex(line, clearLine)+len(clearLine):]
		if n := displayWidth(line); n > width-1 {
			t.Errorf("row of %d columns exceeds %d: %q", n, width-1, line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("row cut inside a rune: %q", line)
		}
	}
	rows := lastFrame(t, out)
	if len(rows) != 4 || !strings.HasSuffix(rows[0], "…") || !strings.HasSuffix(rows[2], "…") || !strings.HasSuffix(rows[3], "…") {
		t.Errorf("want the cut retry notice, the header and two cut rows:\n%s", strings.Join(rows, "\n"))
	}
}

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "売上": 4, "e\u0301": 1, "✓ ok": 4, "한국": 4, "": 0} {
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
	}
	if got := fitWidth("売上の説明売上の説明", 10); got != "売上の説…" || displayWidth(got) > 9 {
		t.Errorf("fitWidth wide = %q", got)
	}
}

// The width is asked on every redraw: a window narrowed during a run gets
// rows cut to its new width, not to the width it had at the start.
func TestAskProgressFollowsTheTerminalWidth(t *testing.T) {
	var buf bytes.Buffer
	width := 100
	p := newLiveProgress(&buf, func() int { return width })
	p.event(orchestrate.Event{Index: 0, Phase: "assemble", Status: "queued", Message: strings.Repeat("word ", 30)})
	width = 30
	p.event(orchestrate.Event{Index: 0, Phase: "dispatch", Status: "running", Message: strings.Repeat("word ", 30)})
	for _, row := range lastFrame(t, buf.String()) {
		if n := displayWidth(row); n > 29 {
			t.Errorf("row of %d columns after the window narrowed to 30: %q", n, row)
		}
	}
}
