package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
)

// A dry run says which planner a real run would use, so the planner input
// it prints can be read: the full planner when asked for, one direct call
// by default on a document the single call handles best, the outline
// planner when the single call would not fit the window.
func TestAskDryRunNamesThePlannerItEstimated(t *testing.T) {
	isolateEnv(t)
	for _, c := range []struct {
		flags      []string
		want, line string
	}{
		{[]string{"--planner", "full"}, orchestrate.PlannerLLM, "(the full planner a real run would use)"},
		{nil, orchestrate.PlannerDirect, "(a real run would answer in one direct call with the whole context)"},
		{[]string{"--window", "9000"}, orchestrate.PlannerOutline, "(the outline planner a real run would use)"},
	} {
		args := append([]string{"ask", "--doc", exampleDoc, "--dry-run", "--no-save"}, c.flags...)
		code, out, errOut := runDefault(t, "", append(args, "What caused the retry storm?")...)
		if code != exitOK || !strings.Contains(out, c.line) {
			t.Errorf("%v: exit %d, no %q in:\n%s\n%s", c.flags, code, c.line, out, errOut)
		}
		code, out, errOut = runDefault(t, "", append(args, "--json", "What caused the retry storm?")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		rec := decodeRecord(t, out)
		planner := orchestrate.PlannerRetrieval
		if c.want == orchestrate.PlannerDirect {
			planner = orchestrate.PlannerDirect
		}
		if rec.EstimatedPlanner != c.want || rec.Planner != planner {
			t.Errorf("%v: estimated planner %q, planner %q; want %q and %q", c.flags, rec.EstimatedPlanner, rec.Planner, c.want, planner)
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
