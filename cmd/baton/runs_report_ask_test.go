package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/baton-dev/baton/internal/chromium"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// runbookDoc is the second document of the report's ask.
const runbookDoc = `# Payments runbook

How the on-call engineer handles the payments API.

## Escalation

Page the database on-call when the pool is exhausted for five minutes.

## Rollback

Roll the gateway back with the deploy tool; never edit the retry policy by hand.
`

// reportPlan delegates three subtasks, two into the incident report and
// one into the runbook.
const reportPlan = `{"subtasks": [
 {"task": "How long did the outage last?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "3 h 42 min"},
 {"task": "Explain the trigger", "skill": "causal_reasoning", "context_pointers": {"sections": ["4.1 Trigger: missing index on the new partition"], "line_ranges": []}},
 {"task": "List the action items", "skill": "fact-extraction", "context_pointers": {"sections": ["9. Action items", "3. Detection"], "line_ranges": []}},
 {"task": "Say who is paged", "skill": "fact-extraction", "context_pointers": {"sections": ["Escalation"], "line_ranges": []}}
], "reasoning": "one lookup, three look-ups in two documents"}`

var (
	domSlice = regexp.MustCompile(`<rect [^>]*class="slice"[^>]*>`)
	domBar   = regexp.MustCompile(`<rect [^>]*class="bar"[^>]*>`)
	domCall  = regexp.MustCompile(`<rect [^>]*class="call"[^>]*>`)
	domAttr  = regexp.MustCompile(`(data-[a-z-]+)="([^"]*)"`)
)

func dataAttrs(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range domAttr.FindAllStringSubmatch(tag, -1) {
		m[a[1]] = a[2]
	}
	return m
}

// TestRunsReportAskInBrowser: an ask over two documents against the
// wire-level fake, one sub-agent call retried once, then baton runs report
// of it opened in headless Chromium: the document map has one highlighted
// region per matched slice range with the record's lines, the token chart's
// bars carry the record's figures, the timeline has one bar per call, a
// 1280×800 screenshot is not blank, and the file fetches nothing.
func TestRunsReportAskInBrowser(t *testing.T) {
	bin := chromium.Require(t)
	isolateEnv(t)
	dir := t.TempDir()
	rec := askForReport(t, dir)
	want := matchedRanges(t, rec)

	page := filepath.Join(dir, "report.html")
	if code, _, errOut := runBaton(t, "", "runs", "report", rec.ID, "--out", page); code != exitOK {
		t.Fatalf("runs report: exit %d\n%s", code, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`).Find(html); m != nil {
		t.Errorf("the report fetches from the network: %s", m)
	}
	if !strings.Contains(string(html), "https://status.example.com/inc-4127") {
		t.Error("the answer's link is not on the page as text")
	}

	dom := chromium.DumpDOM(t, bin, page)
	checkReportMap(t, dom, want)
	checkReportBars(t, dom, rec.Accounting)
	checkReportTimeline(t, dom, rec)

	png := filepath.Join(dir, "report.png")
	chromium.Screenshot(t, bin, page, png, 1280, 800)
	colours, share, err := chromium.Blankness(png)
	if err != nil {
		t.Fatal(err)
	}
	if colours < 3 || share < 0.02 {
		t.Errorf("the report's screenshot looks blank: %d colours, %.3f of pixels not background", colours, share)
	}
}

// askForReport runs the ask the report is made of: two documents, the
// wire-level fake, one sub-agent call retried once.
func askForReport(t *testing.T, dir string) orchestrate.Record {
	t.Helper()
	var failed atomic.Bool
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(reportPlan)
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text("The outage lasted 3 h 42 min. See https://status.example.com/inc-4127 for the timeline.")
		case strings.Contains(r.Messages[0].Content, "Say who is paged") && failed.CompareAndSwap(false, true):
			return llmtest.Overloaded()
		}
		return llmtest.Text("finding")
	}))
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	runbook := filepath.Join(dir, "runbook.md")
	if err := os.WriteFile(runbook, []byte(runbookDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--doc", runbook, "--json", "--runs-dir", filepath.Join(dir, "runs"),
		"How long was the outage, what triggered it, what will change and who is paged?")
	if code != exitOK {
		t.Fatalf("ask: exit %d\n%s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if len(rec.DocumentMap) != 2 {
		t.Fatalf("record document_map has %d documents, want 2", len(rec.DocumentMap))
	}
	if len(rec.Calls) != 5 || s.Count() != 6 {
		t.Fatalf("record has %d calls and the fake saw %d requests; want 5 calls (planner, three sub-agents, synthesis), one retried", len(rec.Calls), s.Count())
	}
	return rec
}

// matchedRanges are the record's matched slice ranges, as subtask:start-end.
func matchedRanges(t *testing.T, rec orchestrate.Record) []string {
	t.Helper()
	var want []string
	for _, st := range rec.Subtasks {
		if st.Slice == nil {
			continue
		}
		if st.Slice.Fallback || len(st.Slice.Unmatched) > 0 {
			t.Fatalf("subtask %d: slice %+v; the plan's pointers should all match", st.Index+1, st.Slice)
		}
		for _, m := range st.Slice.Matched {
			want = append(want, fmt.Sprintf("%d:%d-%d", st.Index, m.StartLine, m.EndLine))
		}
	}
	if len(want) != 4 {
		t.Fatalf("the record has %d matched ranges, want 4: %v", len(want), want)
	}
	return want
}

// checkReportMap checks the document map's regions against the record's
// slices.
func checkReportMap(t *testing.T, dom string, want []string) {
	t.Helper()
	var got []string
	for _, tag := range domSlice.FindAllString(dom, -1) {
		a := dataAttrs(tag)
		got = append(got, a["data-subtask"]+":"+a["data-start-line"]+"-"+a["data-end-line"])
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("document map regions in the browser\n got %v\nwant %v (the record's slices)", got, want)
	}
	if n := strings.Count(dom, "<title>Subtask "); n != len(want) {
		t.Errorf("%d region tooltips, want %d", n, len(want))
	}
}

// checkReportBars checks the token chart's bars against the record's
// figures.
func checkReportBars(t *testing.T, dom string, a orchestrate.Accounting) {
	t.Helper()
	bars := map[string]string{}
	for _, tag := range domBar.FindAllString(dom, -1) {
		m := dataAttrs(tag)
		bars[m["data-series"]+"/"+m["data-phase"]] = m["data-tokens"]
	}
	for k, v := range map[string]int{
		"run/planner": a.PlannerInputTokens, "run/subagents": a.SubagentInputTokens, "run/mapreduce": 0,
		"run/synthesis": a.SynthesisInputTokens, "naive/": a.NaiveInputTokens, "single_call/": a.SingleCallInputTokens,
	} {
		if bars[k] != fmt.Sprint(v) {
			t.Errorf("token bar %s = %q, want the record's %d", k, bars[k], v)
		}
	}
}

// checkReportTimeline checks one timeline bar per call, and the one retry.
func checkReportTimeline(t *testing.T, dom string, rec orchestrate.Record) {
	t.Helper()
	calls := domCall.FindAllString(dom, -1)
	if len(calls) != len(rec.Calls) {
		t.Errorf("timeline has %d bars, want one per call (%d)", len(calls), len(rec.Calls))
	}
	retried := 0
	for i, tag := range calls {
		m := dataAttrs(tag)
		c := rec.Calls[i]
		if m["data-phase"] != c.Phase || m["data-start-ms"] != fmt.Sprint(c.StartMS) || m["data-end-ms"] != fmt.Sprint(c.EndMS) {
			t.Errorf("timeline bar %d = %v, record %+v", i, m, c)
		}
		if m["data-attempts"] == "2" {
			retried++
		}
	}
	if retried != 1 || strings.Count(dom, `class="wait"`) != 1 {
		t.Errorf("%d calls drawn with two attempts and %d waits, want the one retry", retried, strings.Count(dom, `class="wait"`))
	}
}

// TestRunsReportReadmeDryRun: the README's first command, a dry run, then
// baton runs report of it: the page still has the plan, the map with every
// slice and the estimated token figures, and says no model was called.
func TestRunsReportReadmeDryRun(t *testing.T) {
	isolateEnv(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmdline, reportLine string
	for _, line := range strings.Split(string(readme), "\n") {
		if cmdline == "" && strings.HasPrefix(line, "go run ./cmd/baton ask ") {
			cmdline = strings.TrimPrefix(line, "go run ./cmd/baton ")
		}
		if reportLine == "" && strings.HasPrefix(line, "go run ./cmd/baton runs report ") {
			reportLine = strings.TrimPrefix(line, "go run ./cmd/baton ")
		}
	}
	if reportLine == "" {
		t.Fatal("the README has no go run ./cmd/baton runs report line")
	}
	args := shellWords(t, cmdline)
	t.Chdir("../..")
	runs := t.TempDir()
	args = append(args[:1], append([]string{"--runs-dir", runs, "--json"}, args[1:]...)...)
	code, out, errOut := runBaton(t, "", args...)
	if code != exitOK {
		t.Fatalf("README command: exit %d\n%s", code, errOut)
	}
	rec := decodeRecord(t, out)
	page := filepath.Join(t.TempDir(), "dry.html")
	// The README's report command as written, with --out pointed at the
	// test's folder: it must report the run the first command just made.
	rargs := shellWords(t, reportLine)
	for i := range rargs {
		if rargs[i] == "--out" && i+1 < len(rargs) {
			rargs[i+1] = page
		}
	}
	if code, out, errOut := runBaton(t, "", rargs...); code != exitOK || strings.TrimSpace(out) != page {
		t.Fatalf("README report command %v: exit %d, printed %q\n%s", rargs, code, out, errOut)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	matched := 0
	for _, st := range rec.Subtasks {
		if st.Slice != nil {
			matched += len(st.Slice.Matched)
		}
	}
	if !rec.DryRun || matched == 0 || len(rec.DocumentMap) != 1 || len(rec.DocumentMap[0].Sections) < 5 {
		t.Fatalf("dry run record: dry %v, %d matched ranges, map %+v", rec.DryRun, matched, rec.DocumentMap)
	}
	if n := len(domSlice.FindAllString(html, -1)); n != matched {
		t.Errorf("%d map regions, want %d (one per matched range)", n, matched)
	}
	if n := strings.Count(html, `class="section"`); n != len(rec.DocumentMap[0].Sections) {
		t.Errorf("%d sections drawn, the record has %d", n, len(rec.DocumentMap[0].Sections))
	}
	for _, want := range []string{
		`data-phase="planner" data-tokens="` + fmt.Sprint(rec.Accounting.PlannerInputTokens) + `"`,
		`data-series="naive" data-tokens="` + fmt.Sprint(rec.Accounting.NaiveInputTokens) + `"`,
		"Estimates: no model was called", "No model was called, so there is no call to draw",
		"a real run would use llm", "<td>delegated</td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the dry run's report lacks %q", want)
		}
	}
}
