package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
)

func render(t *testing.T, rec *orchestrate.Record) string {
	t.Helper()
	var b strings.Builder
	if err := Ask(&b, rec, Options{}); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	return b.String()
}

// crafted is a finished run of two documents and four subtasks: one self,
// one matched in each document, one that fell back, one failed.
func crafted() *orchestrate.Record {
	f, fits := 0.25, true
	cost := 0.0123
	return &orchestrate.Record{
		ID: "20260101T000000Z-abcd", StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Task: "What happened?",
		Documents: []string{"a.md", "b.md"}, Status: orchestrate.RunPartial, Provider: "anthropic", Model: "m",
		Planner: "retrieval", PlannerMode: "auto",
		PlannerReason: "auto: fits; the full planner failed (bad plan); the retrieval planner ran instead",
		Answer:        "See https://example.com/x for <b>more</b>.",
		Plan:          &plan.Plan{Reasoning: "split"},
		Subtasks: []orchestrate.SubtaskResult{
			{Index: 0, Task: "self one", Skill: "self", Mode: orchestrate.ModeSelf, Status: orchestrate.StatusOK},
			{Index: 1, Task: "in a", Skill: "summarization", Mode: orchestrate.ModeDelegated, Status: orchestrate.StatusOK, Attempts: 2, PromptTokens: 300,
				Slice: &orchestrate.SliceInfo{Matched: []orchestrate.SliceMatch{{Pointer: "Intro", StartLine: 2, EndLine: 10}, {Pointer: "Risks", StartLine: 30, EndLine: 40}}}},
			{Index: 2, Task: "in b", Skill: "fact-extraction", Mode: orchestrate.ModeDelegated, Status: orchestrate.StatusOK, PromptTokens: 200,
				Slice: &orchestrate.SliceInfo{Matched: []orchestrate.SliceMatch{{Pointer: "b.md > Costs", StartLine: 60, EndLine: 90}}, Unmatched: []string{"Nowhere"}}},
			{Index: 3, Task: "all", Skill: "summarization", Mode: orchestrate.ModeDelegated, Status: orchestrate.StatusFailed, Error: "gave up after 5 attempts: 529",
				Slice: &orchestrate.SliceInfo{Fallback: true, Matched: []orchestrate.SliceMatch{}}},
		},
		Usage: orchestrate.PhaseUsage{Planner: llm.Usage{InputTokens: 900, OutputTokens: 50}, Subagents: llm.Usage{InputTokens: 700, OutputTokens: 90}},
		Accounting: orchestrate.Accounting{Counter: "o200k_base", PlannerInputTokens: 1000, SubagentInputTokens: 500, SynthesisInputTokens: 250,
			OrchestratedInputTokens: 1750, NaiveInputTokens: 4000, SingleCallInputTokens: 2100, SingleCallFits: &fits, SavingsRatio: 0.5625, SingleCallSavingsRatio: &f},
		CostUSD: &cost, Cost: &orchestrate.Cost{Planner: 0.01, Subagents: 0.0023, Source: "built-in list prices"},
		DocumentMap: []orchestrate.DocumentOutline{
			{Name: "a.md", StartLine: 1, EndLine: 50, Lines: 50, Bytes: 2000, Sections: []orchestrate.OutlineSection{{Title: "Intro", Level: 1, StartLine: 2, EndLine: 29}, {Title: "Risks", Level: 1, StartLine: 30, EndLine: 50}}},
			{Name: "b.md", StartLine: 51, EndLine: 100, Lines: 50, Bytes: 1500, Sections: []orchestrate.OutlineSection{{Title: "Costs", Level: 1, StartLine: 60, EndLine: 90}}},
		},
		Calls: []orchestrate.Call{
			{Phase: orchestrate.CallPlanner, Subtask: -1, StartMS: 0, EndMS: 100, Status: "ok", Attempts: 1},
			{Phase: orchestrate.CallSubagent, Subtask: 1, StartMS: 110, EndMS: 400, Status: "ok", Attempts: 2,
				Retries: []orchestrate.Retry{{Attempt: 1, Error: "529 overloaded", AtMS: 150, WaitMS: 120}}},
			{Phase: orchestrate.CallSubagent, Subtask: 2, StartMS: 115, EndMS: 300, Status: "ok", Attempts: 1},
			{Phase: orchestrate.CallSubagent, Subtask: 3, StartMS: 120, EndMS: 200, Status: "failed", Error: "529", Attempts: 5},
			{Phase: orchestrate.CallSynthesis, Subtask: -1, StartMS: 410, EndMS: 500, Status: "ok", Attempts: 1},
		},
		DurationMS: 500,
	}
}

var (
	sliceRe = regexp.MustCompile(`<rect [^>]*class="slice"[^>]*>`)
	callRe  = regexp.MustCompile(`<rect [^>]*class="call"[^>]*>`)
	barRe   = regexp.MustCompile(`<rect [^>]*class="bar"[^>]*>`)
	attrRe  = regexp.MustCompile(`(data-[a-z-]+)="([^"]*)"`)
)

func attrs(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(tag, -1) {
		m[a[1]] = a[2]
	}
	return m
}

func TestAskSections(t *testing.T) {
	out := render(t, crafted())
	var regions []string
	for _, tag := range sliceRe.FindAllString(out, -1) {
		a := attrs(tag)
		regions = append(regions, a["data-subtask"]+":"+a["data-document"]+":"+a["data-start-line"]+"-"+a["data-end-line"]+":"+a["data-whole"])
	}
	// Subtask 3 fell back: it covers both documents whole.
	want := "1:a.md:2-10:false 1:a.md:30-40:false 3:a.md:1-50:true 2:b.md:60-90:false 3:b.md:51-100:true"
	if got := strings.Join(regions, " "); got != want {
		t.Errorf("map regions\n got %s\nwant %s", got, want)
	}
	bars := map[string]string{}
	for _, tag := range barRe.FindAllString(out, -1) {
		a := attrs(tag)
		bars[a["data-series"]+"/"+a["data-phase"]] = a["data-tokens"]
	}
	wantBars := map[string]string{"run/planner": "1000", "run/subagents": "500", "run/mapreduce": "0", "run/synthesis": "250", "naive/": "4000", "single_call/": "2100"}
	for k, v := range wantBars {
		if bars[k] != v {
			t.Errorf("bar %s = %q, want %s (all %v)", k, bars[k], v, bars)
		}
	}
	calls := callRe.FindAllString(out, -1)
	if len(calls) != 5 || !strings.Contains(calls[3], `data-status="failed"`) || attrs(calls[1])["data-start-ms"] != "110" {
		t.Errorf("timeline bars %d: %v", len(calls), calls)
	}
	if n := strings.Count(out, `class="wait"`); n != 1 {
		t.Errorf("%d retry waits drawn, want 1", n)
	}
	for _, s := range []string{
		`<td class="fail">failed</td>`, "Subtask 4 failed: gave up after 5 attempts: 529", "Subtask 4: slice fallback",
		"Planner fallback: auto: fits", "Nowhere → no match", "saves <strong>56.2%</strong>", "saves <strong>25.0%</strong>", "$0.0123", "built-in list prices",
		"at most <strong>3</strong> in flight", "&lt;b&gt;more&lt;/b&gt;",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(out, "<b>more</b>") {
		t.Error("the answer's markup reached the page unescaped")
	}
	noFetch(t, out)
}

// noFetch: nothing in the page loads from the network; a URL in a record's
// text is text.
func noFetch(t *testing.T, out string) {
	t.Helper()
	if m := regexp.MustCompile(`(?i)(src|href|xlink:href|action)\s*=\s*["']?\s*(https?:)?//`).FindString(out); m != "" {
		t.Errorf("the page fetches from the network: %s", m)
	}
	if regexp.MustCompile(`(?i)url\(\s*['"]?(https?:)?//`).MatchString(out) || strings.Contains(out, "@import") || strings.Contains(out, "<script") {
		t.Error("the page's style or script can fetch")
	}
}

// TestAskOldRecord: a record made before document_map and calls still
// draws its slices on one strip and says what it lacks.
func TestAskOldRecord(t *testing.T) {
	rec := crafted()
	data, _ := json.Marshal(rec)
	var m map[string]any
	json.Unmarshal(data, &m)
	delete(m, "document_map")
	delete(m, "calls")
	data, _ = json.Marshal(m)
	var old orchestrate.Record
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	out := render(t, &old)
	if !strings.Contains(out, "made before runs kept their documents") || !strings.Contains(out, "made before runs kept the times") {
		t.Error("the page does not say the record lacks the map and the calls")
	}
	regions := sliceRe.FindAllString(out, -1)
	if len(regions) != 4 {
		t.Errorf("%d regions on the fallback strip, want 4 (3 matches and a fallback)", len(regions))
	}
	if callRe.MatchString(out) {
		t.Error("a timeline drawn without calls")
	}
}

// TestAskBadRecords: empty, partial and inconsistent records render
// without a panic.
func TestAskBadRecords(t *testing.T) {
	recs := map[string]*orchestrate.Record{
		"empty":  {},
		"failed": {Status: orchestrate.RunFailed, Error: "the task is empty", Calls: []orchestrate.Call{}},
		"no slice": {Subtasks: []orchestrate.SubtaskResult{{Index: 0, Mode: orchestrate.ModeDelegated}},
			DocumentMap: []orchestrate.DocumentOutline{{Name: "x", StartLine: 1, EndLine: 1, Lines: 1}}},
		"nonsense": {
			Subtasks: []orchestrate.SubtaskResult{{Index: -5, Mode: orchestrate.ModeDelegated, PromptTokens: -3, MapCalls: 2,
				Slice: &orchestrate.SliceInfo{Matched: []orchestrate.SliceMatch{{StartLine: 900, EndLine: -4}, {StartLine: 0, EndLine: 0}}}}},
			DocumentMap: []orchestrate.DocumentOutline{{Name: "zero"}, {Name: "neg", StartLine: 10, EndLine: 2, Lines: -8,
				Sections: []orchestrate.OutlineSection{{Level: -1, StartLine: 5, EndLine: 1}}}},
			Accounting: orchestrate.Accounting{PlannerInputTokens: -10, SubagentInputTokens: -1, NaiveInputTokens: -5},
			Calls:      []orchestrate.Call{{StartMS: 50, EndMS: 10, Retries: []orchestrate.Retry{{AtMS: -1, WaitMS: -9}}}},
			DurationMS: -1,
		},
	}
	for name, rec := range recs {
		t.Run(name, func(t *testing.T) {
			out := render(t, rec)
			if !strings.Contains(out, "</html>") {
				t.Error("page not finished")
			}
			if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
				t.Error("a coordinate is not a number")
			}
		})
	}
	if err := Ask(&strings.Builder{}, nil, Options{}); err == nil {
		t.Error("a nil record gave no error")
	}
}
