package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/chromium"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runlog"
)

// resetting plays the example workflow with one mid-step reset: the
// analysis step reads (one read fails), dispatches two sub-agents in a turn
// the provider reports near the window, writes its ledger entry, and its
// fresh session writes the analysis and finishes; the other steps finish.
func resetting() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		rounds := 0
		for _, m := range r.Messages {
			if m.Role == llm.RoleAssistant {
				rounds++
			}
		}
		switch {
		case strings.Contains(r.System, "You are a sub-agent"):
			return llmtest.Text("the flag parsing lives in app/greet.py:3")
		case r.ToolChoiceName == "write_ledger":
			return llmtest.CallTools(llmtest.Call("write_ledger", `{"frozen_decisions": ["add a --shout flag (docs/requirements.md:3)"],
				"done_so_far": [{"text": "read the requirements and the code", "evidence": "docs/requirements.md:1"}],
				"artifacts": [], "current_phase": "analysis", "next_step": "write specs/analysis.md", "open_tickets": []}`))
		case strings.Contains(r.System, "# Analyse the request"):
			if strings.Contains(r.Messages[0].Content, "## Ledger —") {
				if rounds == 0 {
					return llmtest.CallTools(llmtest.Call("write_file", `{"path": "specs/analysis.md", "content": "# Analysis\nAdd --shout.\n"}`))
				}
				return llmtest.CallTools(llmtest.Call("finish", `{"summary": "analysis written"}`))
			}
			switch rounds {
			case 0:
				return llmtest.CallTools(llmtest.Call("read_file", `{"path": "docs/requirements.md"}`), llmtest.Call("read_file", `{"path": "docs/no-such-file.md"}`))
			case 1:
				reply := llmtest.CallTools(llmtest.Call("dispatch_agents", `{"tasks": [{"goal": "find where arguments are parsed", "in_scope": "app/"},
					{"goal": "find the tests that cover greeting", "in_scope": "app/test_greet.py"}]}`))
				reply.Usage = &llm.Usage{InputTokens: 150_000, OutputTokens: 40}
				return reply
			}
			return llmtest.CallTools(llmtest.Call("finish", `{"summary": "not reached"}`))
		case strings.Contains(r.System, "# Write the report"):
			return llmtest.Text("REPORT: all phases done")
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	})
}

var (
	ctxPointRe  = regexp.MustCompile(`<rect[^>]*class="ctx-point"[^>]*>`)
	attrRe      = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
	thresholdRe = regexp.MustCompile(`<line[^>]*class="threshold-line"[^>]*>`)
	windowRe    = regexp.MustCompile(`<line[^>]*class="window-line"[^>]*>`)
	resetMarkRe = regexp.MustCompile(`<line[^>]*class="reset-marker"[^>]*>`)
)

func runDataAttrs(tag string) map[string]string {
	m := map[string]string{}
	for _, kv := range attrRe.FindAllStringSubmatch(tag, -1) {
		m[kv[1]] = kv[2]
	}
	return m
}

// A workflow run with a reset, reported and opened in a real browser: the
// context chart has one bar per model call of the steps' sessions with the
// log's figures, the threshold and window lines at run_start's figures, and
// one marker per reset; the page is not blank at 1280×800.
func TestRunsReportOfAWorkflowRunInABrowser(t *testing.T) {
	bin := chromium.Require(t)
	isolateEnv(t)
	ws := exampleWorkspace(t)
	s := llmtest.NewServer(t, resetting())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	if code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(ws, "baton.yaml")); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	runs, _ := listRuns(t, "--kind", "run")
	if len(runs) != 1 {
		t.Fatalf("runs = %v", runIDs(runs))
	}
	run := runs[0]
	start, contexts, resets := reportedRunFigures(t, run.Record)
	if resets != 1 || len(contexts) < 5 || start.ThresholdTokens == 0 {
		t.Fatalf("the run did not go as scripted: %d resets, %d calls, threshold %d", resets, len(contexts), start.ThresholdTokens)
	}

	page := filepath.Join(t.TempDir(), "report.html")
	code, out, errOut := runBaton(t, "", "runs", "report", run.ID, "--out", page)
	if code != exitOK || strings.TrimSpace(out) != page {
		t.Fatalf("runs report: exit %d\n%s%s", code, out, errOut)
	}
	dom := chromium.DumpDOM(t, bin, page)

	var got []string
	for _, tag := range ctxPointRe.FindAllString(dom, -1) {
		got = append(got, runDataAttrs(tag)["context-tokens"])
	}
	if strings.Join(got, ",") != strings.Join(contexts, ",") {
		t.Errorf("chart bars' context tokens %v, the log's model calls %v", got, contexts)
	}
	if th := thresholdRe.FindAllString(dom, -1); len(th) != 1 || runDataAttrs(th[0])["threshold-tokens"] != strconv.Itoa(start.ThresholdTokens) {
		t.Errorf("threshold lines %v, want one at %d", th, start.ThresholdTokens)
	}
	if w := windowRe.FindAllString(dom, -1); len(w) != 1 || runDataAttrs(w[0])["window-tokens"] != strconv.Itoa(start.WindowTokens) {
		t.Errorf("window lines %v, want one at %d", w, start.WindowTokens)
	}
	marks := resetMarkRe.FindAllString(dom, -1)
	if len(marks) != resets {
		t.Errorf("%d reset markers, the log has %d resets", len(marks), resets)
	} else if a := runDataAttrs(marks[0]); a["reason"] != runlog.ReasonThreshold || a["after-call"] != "3" {
		// The reset came after the analysis step's second turn and the
		// request for its ledger entry.
		t.Errorf("reset marker %v, want reason threshold after call 3", a)
	}
	for _, want := range []string{
		"Ledger entry of ", "write specs/analysis.md", // the reset's ledger entry, expandable
		"find where arguments are parsed",                             // a sub-agent's return
		`data-tool="read_file"`, `data-errors="1"`, "no-such-file.md", // tool calls, the failed one shown
		"One continuous session (modelled)", "auto-compaction",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(dom, "<script") {
		t.Error("the report holds a script")
	}

	checkNotBlank(t, bin, page)
}

// reportedRunFigures reads from a run's log what its report must show: the
// run_start (threshold and window), the context of each of the steps' model
// calls, and the resets.
func reportedRunFigures(t *testing.T, log string) (start runlog.Event, contexts []string, resets int) {
	t.Helper()
	events, _, err := runlog.Read(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		switch {
		case e.Type == runlog.RunStart:
			start = e
		case e.Type == runlog.ModelCall && !e.Subagent:
			contexts = append(contexts, strconv.Itoa(e.ContextTokens))
		case e.Type == runlog.Reset:
			resets++
		}
	}
	return start, contexts, resets
}

// checkNotBlank: a screenshot of the page shows something besides its
// background.
func checkNotBlank(t *testing.T, bin, page string) {
	t.Helper()
	png := filepath.Join(t.TempDir(), "report.png")
	chromium.Screenshot(t, bin, page, png, 1280, 800)
	colours, share, err := chromium.Blankness(png)
	if err != nil {
		t.Fatal(err)
	}
	if colours < 3 || share < 0.02 {
		t.Errorf("the screenshot looks blank: %d colours, %.3f of pixels not background", colours, share)
	}
}
