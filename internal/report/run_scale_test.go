package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/baton-dev/baton/runlog"
)

// A long run's report stays proportional to its log: a bounded number of
// bytes of page, and of memory allocated, per call; resets and calls are
// not matched against each other call by call.
func TestRunReportOfALongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a long log")
	}
	const calls, resetEvery = 20000, 100
	events := []runlog.Event{{Type: runlog.RunStart, WindowTokens: 200000, ThresholdTokens: 130000, LedgerPath: "specs/ledger.md"}}
	for i := 0; i < calls; i++ {
		step := strconv.Itoa(i/1000 + 1)
		if i%1000 == 0 {
			events = append(events, runlog.Event{Type: runlog.StepStart, Step: step, Skill: "s"})
		}
		events = append(events, runlog.Event{Type: runlog.ModelCall, Step: step, Skill: "s", Turn: i%1000 + 1, Model: "claude-sonnet-4-5",
			ContextTokens: 1000 + i%resetEvery*1000, Usage: use(1000+i%resetEvery*1000, 50)},
			runlog.Event{Type: runlog.ToolCall, Step: step, Skill: "s", Turn: i%1000 + 1, Tool: "read_file", Status: runlog.ToolOK})
		if i%resetEvery == resetEvery-1 {
			events = append(events, runlog.Event{Type: runlog.Reset, Step: step, Reason: runlog.ReasonThreshold, ContextTokens: 131000})
		}
	}
	// Written in one go: runlog.Writer's fsync per event is not what is
	// measured here.
	dir := filepath.Join(t.TempDir(), "r1")
	var log bytes.Buffer
	for i, e := range events {
		e.Run, e.Time = "r1", t0.Add(time.Duration(i)*time.Millisecond)
		line, _ := json.Marshal(e)
		log.Write(append(line, '\n'))
	}
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var b bytes.Buffer
	if err := Run(&b, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d calls: page %d bytes, %d bytes allocated", calls, b.Len(), alloc)
	if got := len(ctxPointRe.FindAllIndex(b.Bytes(), -1)); got != calls {
		t.Errorf("%d bars, want %d", got, calls)
	}
	if b.Len() > calls*1500 {
		t.Errorf("page of %d bytes for %d calls: more than 1500 bytes a call", b.Len(), calls)
	}
	if alloc > uint64(calls)*25000 {
		t.Errorf("%d bytes allocated for %d calls: more than 25 kB a call", alloc, calls)
	}
}
