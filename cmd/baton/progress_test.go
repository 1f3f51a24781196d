package main

import (
	"bytes"
	"strings"
	"testing"

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
