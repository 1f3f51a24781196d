package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

const scaleMarker = "KESTREL-4"

var scaleCount = regexp.MustCompile(`count: (\d+)`)

func sumScaleCounts(s string) int {
	n := 0
	for _, m := range scaleCount.FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// scaleCorpus writes n documents into dir, with the marker planted a known
// number of times across them, and returns that number and the corpus's
// size in tokens.
func scaleCorpus(t *testing.T, dir string, n int) (planted, size int) {
	t.Helper()
	for d := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Site log %d\n\nThe log of site %d, tag site-tag-%d.\n\n", d+1, d+1, d+1)
		for p := range 4 {
			fmt.Fprintf(&b, "## Shift %d\n\n", p+1)
			for j := range 24 {
				fmt.Fprintf(&b, "Entry %d of shift %d at site %d: pumps ran, valves held, logs filed w%d.", j+1, p+1, d+1, (d*97+p*31+j)%991)
				if (d+p+j)%9 == 0 {
					fmt.Fprintf(&b, " Flag %s raised.", scaleMarker)
					planted++
				}
				b.WriteString("\n")
				if j%6 == 5 {
					b.WriteString("\n")
				}
			}
		}
		text := b.String()
		size += tokens.Count(text)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("site-%02d.md", d+1)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return planted, size
}

// scaleFake answers only from what it was sent: the planner's plan names
// site 31's log by its outline path, the map calls count the flags in their
// part, and the reduce and the synthesis add up what they were given.
func scaleFake() llmtest.Rule {
	pick := regexp.MustCompile(`(?m)^(\S*site-31\.md > Site log 31) \[lines`)
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		switch {
		case strings.Contains(r.System, "You are the planner"):
			m := pick.FindStringSubmatch(last)
			if m == nil {
				return llmtest.Text("the outline has no such path")
			}
			return llmtest.Text(`{"subtasks": [
				{"task": "Count the ` + scaleMarker + ` flags", "skill": "fact-extraction", "scope": "all", "context_pointers": {"sections": [], "line_ranges": []}, "answer": ""},
				{"task": "Give the tag of site 31", "skill": "lookup", "context_pointers": {"sections": ["` + m[1] + `"], "line_ranges": []}, "answer": ""}],
				"reasoning": "a count needs every part; the tag is in one log"}`)
		case strings.Contains(r.System, "You are the synthesis step"):
			_, results, _ := strings.Cut(last, "Subtask results")
			tag := regexp.MustCompile(`site-tag-\d+`).FindString(results)
			return llmtest.Text(fmt.Sprintf("FINAL count: %d; tag %s", sumScaleCounts(results), tag))
		case strings.Contains(r.System, "You are the reduce step"):
			_, partials, _ := strings.Cut(last, "Partial answers")
			return llmtest.Text(fmt.Sprintf("count: %d", sumScaleCounts(partials)))
		}
		_, ctx, _ := strings.Cut(last, "<context>\n")
		ctx, _, _ = strings.Cut(ctx, "</context>")
		if strings.Contains(last, "subtask: Give the tag of site 31") {
			return llmtest.Text("the tag is " + regexp.MustCompile(`site-tag-\d+`).FindString(ctx))
		}
		return llmtest.Text(fmt.Sprintf("count: %d", strings.Count(ctx, scaleMarker)))
	})
}

// The scale acceptance, end to end through the command: a corpus of
// many documents totalling more than ten times the planner's window, asked
// a question that needs every part (a count) and one that needs one
// document. auto plans from the outline; the count runs map-reduce over
// parts that each fit; the fake answers only from what it was sent (a part
// not sent shows as a wrong total) and refuses anything over its window, so
// its log is the proof that nothing over the window was sent. The record
// shows the outline planner, the map and reduce calls, and both baselines.
func TestAskCorpusTenTimesThePlannerWindow(t *testing.T) {
	isolateEnv(t)
	const window = 16384
	dir := t.TempDir()
	planted, size := scaleCorpus(t, dir, 72)
	// Documents are named as a user in their folder would name them.
	t.Chdir(dir)
	if size < 10*window {
		t.Fatalf("the corpus is %d tokens, under ten windows", size)
	}
	s := llmtest.NewServer(t, scaleFake())
	s.SetContextWindow(window)
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, out, errOut := runDefault(t, "", "ask", "--doc", ".", "--window", strconv.Itoa(window), "--no-save", "--json",
		"How many "+scaleMarker+" flags were raised, and what is the tag of site 31?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, r := range s.Requests() {
		if r.Status == 400 {
			t.Errorf("a request over the window was sent: %s (%.60q)", r.Path, r.System)
		}
		n := tokens.Count(r.System)
		for _, m := range r.Messages {
			n += tokens.Count(m.PromptText())
		}
		if n+r.MaxTokens > window {
			t.Errorf("request of %d prompt tokens + %d for the reply over the %d window", n, r.MaxTokens, window)
		}
	}
	rec := decodeRecord(t, out)
	if rec.Status != orchestrate.RunOK || rec.Planner != orchestrate.PlannerOutline {
		t.Errorf("status %q, planner %q (%s)", rec.Status, rec.Planner, rec.PlannerReason)
	}
	for _, st := range rec.Subtasks {
		t.Logf("subtask %d %q scope %q parts %d map %d reduce %d out %.80q", st.Index, st.Task, st.Scope, st.Parts, st.MapCalls, st.ReduceCalls, st.Output)
	}
	want := fmt.Sprintf("FINAL count: %d; tag site-tag-31", planted)
	if rec.Answer != want {
		t.Errorf("answer %q, want %q", rec.Answer, want)
	}
	a := rec.Accounting
	if a.MapCalls < 10 || a.ReduceCalls < 1 {
		t.Errorf("map calls %d, reduce calls %d", a.MapCalls, a.ReduceCalls)
	}
	if a.NaiveInputTokens <= a.OrchestratedInputTokens || a.SingleCallInputTokens < size || a.SingleCallFits == nil || *a.SingleCallFits {
		t.Errorf("naive %d, orchestrated %d, single call %d (fits %v), corpus %d",
			a.NaiveInputTokens, a.OrchestratedInputTokens, a.SingleCallInputTokens, a.SingleCallFits, size)
	}
	if a.SingleCallSavingsRatio == nil {
		t.Errorf("no ratio against the single call")
	}
}
