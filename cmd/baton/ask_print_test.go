package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
)

// A dry run says which planner a real run would use, so the planner input
// it prints can be read: the full planner while the document is a small
// share of the window, the outline planner past it.
func TestAskDryRunNamesThePlannerItEstimated(t *testing.T) {
	isolateEnv(t)
	for _, c := range []struct {
		window, want, line string
	}{
		{"", orchestrate.PlannerLLM, "(the full planner a real run would use)"},
		{"16000", orchestrate.PlannerOutline, "(the outline planner a real run would use)"},
	} {
		args := []string{"ask", "--doc", exampleDoc, "--dry-run", "--no-save"}
		if c.window != "" {
			args = append(args, "--window", c.window)
		}
		code, out, errOut := runBaton(t, "", append(args, "What caused the retry storm?")...)
		if code != exitOK || !strings.Contains(out, c.line) {
			t.Errorf("window %q: exit %d, no %q in:\n%s\n%s", c.window, code, c.line, out, errOut)
		}
		code, out, errOut = runBaton(t, "", append(args, "--json", "What caused the retry storm?")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if rec := decodeRecord(t, out); rec.EstimatedPlanner != c.want || rec.Planner != orchestrate.PlannerRetrieval {
			t.Errorf("window %q: estimated planner %q, planner %q; want %q and retrieval", c.window, rec.EstimatedPlanner, rec.Planner, c.want)
		}
	}
}

// The summary after a run names its map and reduce requests.
func TestAskSummaryNamesMapReduce(t *testing.T) {
	var b bytes.Buffer
	rec := &orchestrate.Record{Subtasks: []orchestrate.SubtaskResult{{Mode: orchestrate.ModeDelegated, Status: orchestrate.StatusOK}}}
	rec.Accounting.MapCalls, rec.Accounting.ReduceCalls = 3, 1
	printSummary(&b, rec)
	if !strings.Contains(b.String(), "map-reduce: 3 map requests and 1 reduce request") {
		t.Errorf("summary:\n%s", b.String())
	}
	b.Reset()
	rec.Accounting.MapCalls, rec.Accounting.ReduceCalls = 0, 0
	printSummary(&b, rec)
	if strings.Contains(b.String(), "map-reduce") {
		t.Errorf("a run without map-reduce names it:\n%s", b.String())
	}
}
