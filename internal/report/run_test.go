package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// runFolder writes events as the run log of a run folder inside a
// workspace (<ws>/.baton/runs/r1) and returns the folder and workspace.
func runFolder(t *testing.T, events []runlog.Event) (dir, ws string) {
	t.Helper()
	ws = t.TempDir()
	dir = filepath.Join(ws, ".baton", "runs", "r1")
	w, err := runlog.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		e.Run = "r1"
		e.Time = t0.Add(time.Duration(i) * time.Second)
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return dir, ws
}

func use(in, out int) *runlog.Usage { return &runlog.Usage{InputTokens: in, OutputTokens: out} }

// craftedRun is a resumed two-step run: step 1 resets once mid-step (and
// replays that reset and a call when resumed), runs a sub-agent whose
// return was spilled, and one of its tool calls fails.
func craftedRun() []runlog.Event {
	lt := t0.Add(5 * time.Second).Truncate(time.Second)
	return []runlog.Event{
		{Type: runlog.RunStart, Phases: []string{"analysis", "report"}, LedgerPath: "specs/ledger.md", WindowTokens: 10000, ThresholdTokens: 6500, Model: "claude-sonnet-4-5"},
		{Type: runlog.StepStart, Step: "1", Skill: "analyse", Phase: "analysis"},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 1, Model: "claude-sonnet-4-5", ContextTokens: 1000, Usage: use(1000, 10)},
		{Type: runlog.ToolCall, Step: "1", Skill: "analyse", Turn: 1, Tool: "read_file", Status: runlog.ToolOK},
		{Type: runlog.ToolCall, Step: "1", Skill: "analyse", Turn: 1, Tool: "read_file", Status: runlog.ToolError, Note: "docs/<gone>.md: no such file"},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 2, Model: "claude-sonnet-4-5", ContextTokens: 7000, Usage: use(7000, 20)},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 2, Model: "claude-sonnet-4-5", ContextTokens: 300, Usage: use(300, 900), Subagent: true},
		{Type: runlog.SubagentReturn, Step: "1", Skill: "analyse", Tokens: 40, ContractTokens: 40, Action: runlog.ActionTruncated, Note: "summarise the tests", SpillPath: ".baton/runs/r1/spill/001-subagent.txt"},
		{Type: runlog.ToolCall, Step: "1", Skill: "analyse", Turn: 2, Tool: "dispatch_agents", Status: runlog.ToolOK},
		{Type: runlog.Reset, Step: "1", Skill: "analyse", Reason: runlog.ReasonThreshold, Mode: "fresh_session", ContextTokens: 7100, ContextFraction: 0.71, LedgerTime: lt},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 3, Model: "claude-sonnet-4-5", ContextTokens: 1200, Usage: use(1200, 10)},
		{Type: runlog.StepEnd, Step: "1", Skill: "analyse", Status: "interrupted", Note: "interrupted: SIGINT"},
		{Type: runlog.Resume, From: runlog.FromLedger},
		{Type: runlog.StepStart, Step: "1", Skill: "analyse", Phase: "analysis"},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 1, Model: "claude-sonnet-4-5", ContextTokens: 1000, Replayed: true},
		{Type: runlog.ToolCall, Step: "1", Skill: "analyse", Turn: 1, Tool: "read_file", Status: runlog.ToolOK, Replayed: true},
		{Type: runlog.Reset, Step: "1", Skill: "analyse", Reason: runlog.ReasonThreshold, ContextTokens: 7100, Replayed: true, LedgerTime: lt},
		{Type: runlog.ModelCall, Step: "1", Skill: "analyse", Turn: 4, Model: "claude-sonnet-4-5", ContextTokens: 1300, Usage: use(1300, 10)},
		{Type: runlog.StepEnd, Step: "1", Skill: "analyse", Status: "ok"},
		{Type: runlog.StepStart, Step: "2", Skill: "<report>", Phase: "report"},
		{Type: runlog.ModelCall, Step: "2", Skill: "<report>", Turn: 1, Model: "claude-sonnet-4-5", ContextTokens: 900, Usage: use(900, 30)},
		{Type: runlog.StepEnd, Step: "2", Skill: "<report>", Status: "ok"},
		{Type: runlog.RunEnd, Status: "ok"},
	}
}

func writeLedger(t *testing.T, ws string, at time.Time) {
	t.Helper()
	e := ledger.Entry{Phase: "analysis", Time: at, FrozenDecisions: []string{"add a --shout flag"}, CurrentPhase: "analysis",
		NextStep: "write specs/analysis.md NEXT-STEP-MARK", DoneSoFar: []ledger.Item{{Text: "read the code", Evidence: "app/greet.py:1"}}}
	if err := ledger.Append(filepath.Join(ws, "specs", "ledger.md"), e); err != nil {
		t.Fatal(err)
	}
}

func renderRun(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Run(&b, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	ctxPointRe = regexp.MustCompile(`<rect[^>]*class="ctx-point"[^>]*>`)
	markRe     = regexp.MustCompile(`<line[^>]*class="reset-marker"[^>]*>`)
	ctxRe      = regexp.MustCompile(`data-context-tokens="(\d+)"`)
	afterRe    = regexp.MustCompile(`data-after-call="(\d+)"`)
)

func TestRunReportOfACraftedLog(t *testing.T) {
	events := craftedRun()
	dir, ws := runFolder(t, events)
	os.MkdirAll(filepath.Join(ws, "specs"), 0o755)
	writeLedger(t, ws, t0.Add(-time.Hour)) // another entry first
	writeLedger(t, ws, t0.Add(5*time.Second).Truncate(time.Second))
	html := renderRun(t, dir)

	// The chart: the steps' own paid calls (not the sub-agent's, not the
	// replayed one), in order, with the log's contexts.
	var got []string
	for _, bar := range ctxPointRe.FindAllString(html, -1) {
		got = append(got, ctxRe.FindStringSubmatch(bar)[1])
	}
	if strings.Join(got, ",") != "1000,7000,1200,1300,900" {
		t.Errorf("bars %v, want 1000,7000,1200,1300,900", got)
	}
	// One marker for the reset, after the second call; the replayed
	// reset is not drawn again.
	marks := markRe.FindAllString(html, -1)
	if len(marks) != 1 || afterRe.FindStringSubmatch(marks[0])[1] != "2" {
		t.Errorf("reset markers %v, want one after call 2", marks)
	}
	for _, want := range []string{
		`class="threshold-line" data-threshold-tokens="6500"`, `class="window-line" data-window-tokens="10000"`,
		// Baseline: 1000 + 7000 + 300 + (1200 + 7100) + (1300 + 7100) + (900 + 1300 + 7100) sent
		// 1000+7000+300+1200+1300+900 = 11700 against 1000+7000+300+8300+8400+9300 = 34300.
		`data-sent-tokens="11700" data-continuous-session-tokens="34300"`,
		"NEXT-STEP-MARK", "<details><summary>Ledger entry of 2026-03-01T10:00:05Z", // the reset's entry, not the other one
		"1 reset(s) were taken again from a step journal",
		`data-tool="read_file" data-subagent="false" data-calls="2" data-errors="1"`, // the replayed read not counted
		`docs/&lt;gone&gt;.md: no such file`,                                         // the error shown, escaped
		`data-action="truncated"`, ".baton/runs/r1/spill/001-subagent.txt",
		"&lt;report&gt;", // a skill name is escaped
		`data-step="1" data-status="ok"`,
		"Against one continuous session (modelled)", "auto-compaction",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	if strings.Contains(html, "<report>") {
		t.Error("a skill name reached the page unescaped")
	}
	if strings.Contains(html, "2026-03-01T09:00:00Z</summary>") {
		t.Error("the report shows a ledger entry no reset was seeded from")
	}
	// Step 1's paid calls: 1000+7000+300+1200+1300 input, sub-agent's included.
	if !strings.Contains(html, "<td class=\"num\">10,800</td>") {
		t.Error("step 1's input tokens are not 10,800")
	}
}

func TestRunReportWithoutItsLedger(t *testing.T) {
	dir, _ := runFolder(t, craftedRun())
	html := renderRun(t, dir)
	if !strings.Contains(html, "The ledger specs/ledger.md is missing") {
		t.Error("a missing ledger is not noted")
	}
	// A ledger path that leaves the workspace is not read.
	events := craftedRun()
	events[0].LedgerPath = "../outside.md"
	dir, _ = runFolder(t, events)
	if html := renderRun(t, dir); !strings.Contains(html, "leaves the workspace") {
		t.Error("a ledger path outside the workspace is not refused")
	}
}

// A torn log, an empty one, and logs of odd shapes never panic: the first
// is drawn as far as it goes, the empty one is one error.
func TestRunReportOfBrokenLogs(t *testing.T) {
	dir, _ := runFolder(t, craftedRun())
	f, _ := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-03-01T10:01:00Z","run":"r1","type":"model_ca`)
	f.Close()
	if html := renderRun(t, dir); !strings.Contains(html, "is unfinished") || len(ctxPointRe.FindAllString(html, -1)) != 5 {
		t.Error("a torn log is not drawn with a note")
	}

	empty := filepath.Join(t.TempDir(), "r0")
	os.MkdirAll(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "events.jsonl"), nil, 0o644)
	var b bytes.Buffer
	if err := Run(&b, empty, Options{}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("empty log: %v, want one line of error", err)
	}

	for name, events := range map[string][]runlog.Event{
		"no run_start":         {{Type: runlog.ModelCall, ContextTokens: 5, Usage: use(5, 1)}},
		"only a reset":         {{Type: runlog.Reset, Reason: runlog.ReasonThreshold}},
		"unknown types":        {{Type: "something_new"}, {Type: runlog.ToolCall}},
		"zero window":          {{Type: runlog.RunStart}, {Type: runlog.StepStart, Step: "1"}, {Type: runlog.ModelCall, Step: "1", ContextTokens: 1, Usage: use(1, 1)}},
		"boundary reset first": {{Type: runlog.Reset, Reason: runlog.ReasonBoundary, LedgerTime: t0}, {Type: runlog.SubagentReturn}},
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := runFolder(t, events)
			if html := renderRun(t, dir); !strings.Contains(html, "</html>") {
				t.Error("no page")
			}
		})
	}
}
