package orchestrate_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

const marker = "ZEBRA-7"

func isReduce(r llmtest.RecordedRequest) bool {
	return strings.Contains(r.System, "You are the reduce step")
}

// contextOf is the text between <context> and </context> of a sub-agent
// request: what the fake may answer from.
func contextOf(r llmtest.RecordedRequest) string {
	u := r.Messages[len(r.Messages)-1].Content
	_, after, ok := strings.Cut(u, "<context>\n")
	if !ok {
		return ""
	}
	inside, _, _ := strings.Cut(after, "</context>")
	return inside
}

var countLine = regexp.MustCompile(`count: (\d+)`)

// sumCounts adds every "count: N" in s.
func sumCounts(s string) int {
	n := 0
	for _, m := range countLine.FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// filler pads a reply so that partial answers take room, as real ones do,
// and the reduce has to run in rounds.
var filler = strings.Repeat("The part was read line by line and every mention was checked against the task. ", 12)

// counting answers from what it was sent: a map request counts the markers
// in its context, a reduce request adds up the counts it was given, the
// synthesis repeats the total. A part it was not sent shows as a wrong count.
func counting() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		switch {
		case isPlanner(r):
			return llmtest.Text(`{"subtasks": [{"task": "Count the mentions of ` + marker + `", "skill": "fact-extraction", "scope": "all"}], "reasoning": "a count needs every part"}`)
		case isSynthesis(r):
			_, results, _ := strings.Cut(last, "Subtask results")
			return llmtest.Text(fmt.Sprintf("FINAL count: %d", sumCounts(results)))
		case isReduce(r):
			_, partials, _ := strings.Cut(last, "Partial answers")
			return llmtest.Text(fmt.Sprintf("count: %d\n%s", sumCounts(partials), filler))
		}
		return llmtest.Text(fmt.Sprintf("count: %d\n%s", strings.Count(contextOf(r), marker), filler))
	})
}

// corpus is a report of n sections with the marker planted a known number
// of times (0 to 3 per section, some on one line twice), and that total.
func corpus(n int) (string, int) {
	var b strings.Builder
	total := 0
	b.WriteString("# Field notes\n\n")
	for i := range n {
		fmt.Fprintf(&b, "## Site %d\n\n", i+1)
		k := (i * 7) % 4
		for j := range 12 {
			fmt.Fprintf(&b, "Observation %d at site %d: the pumps ran, the valves held and the logs were filed on time.", j+1, i+1)
			if j < k {
				fmt.Fprintf(&b, " Seen: %s.", marker)
				total++
				if j == 0 && i%5 == 0 {
					fmt.Fprintf(&b, " Again %s.", marker)
					total++
				}
			}
			b.WriteString("\n")
			if j%4 == 3 {
				b.WriteString("\n")
			}
		}
	}
	return b.String(), total
}

// requestTokens counts a recorded request as the fake does.
func recordedTokens(r llmtest.RecordedRequest) int {
	n := tokens.Count(r.System)
	for _, m := range r.Messages {
		n += tokens.Count(m.PromptText())
	}
	return n
}

// A count over a corpus ten times the window: the retrieval planner gives
// it scope all, the skill runs over every part, and the partial counts are
// joined in at least two reduce rounds. The fake answers only from what it
// was sent, so a part left out or sent twice would show in the total; no
// request is over the window; the record and the accounting count every
// map and reduce call.
func TestAskScopeAllCountsAcrossEveryPart(t *testing.T) {
	const window = 4000
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			text, planted := corpus(140)
			if n := tokens.Count(text); n < 10*window {
				t.Fatalf("corpus is only %d tokens", n)
			}
			s := llmtest.NewServer(t, counting())
			s.SetContextWindow(window)
			cfg := orchestrate.Config{
				Task:         "How many times is " + marker + " mentioned in total?",
				Context:      text,
				Sources:      []string{"notes.md"},
				Model:        mk(t, s),
				ModelName:    "test-model",
				Counter:      tokens.Default(),
				Window:       window,
				SubagentMax:  600,
				SynthesisMax: 600,
				PlannerMax:   600,
				Concurrency:  3,
			}
			var mu sync.Mutex
			events := map[string]int{}
			cfg.Progress = func(e orchestrate.Event) {
				mu.Lock()
				events[e.Phase+" "+e.Status]++
				mu.Unlock()
			}
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
			}
			if over := overWindow(s); len(over) > 0 {
				t.Errorf("requests over the window were sent: %v", over)
			}
			var maps, reduces int
			var mapUsage llm.Usage
			for _, r := range s.Requests() {
				if n := recordedTokens(r) + r.MaxTokens; n > window {
					t.Errorf("a %d-token request (with its max_tokens) reached the fake", n)
				}
				switch {
				case isReduce(r):
					reduces++
					mapUsage = mapUsage.Add(r.Usage)
				case !isPlanner(r) && !isSynthesis(r):
					maps++
					mapUsage = mapUsage.Add(r.Usage)
				}
			}
			t.Logf("%d planted; %d map calls, %d reduce calls in %d rounds", planted, maps, reduces, rec.Subtasks[0].ReduceRounds)
			if want := fmt.Sprintf("FINAL count: %d", planted); rec.Answer != want {
				t.Errorf("answer = %q, want %q", rec.Answer, want)
			}
			if len(rec.Subtasks) != 1 {
				t.Fatalf("subtasks = %+v", rec.Subtasks)
			}
			st := rec.Subtasks[0]
			if st.Scope != "all" || st.Status != orchestrate.StatusOK {
				t.Errorf("subtask: scope %q, status %q", st.Scope, st.Status)
			}
			if st.MapCalls != maps || st.ReduceCalls != reduces || maps < 10 {
				t.Errorf("record: %d map and %d reduce calls; the fake saw %d and %d", st.MapCalls, st.ReduceCalls, maps, reduces)
			}
			if st.ReduceRounds < 2 || reduces < 3 {
				t.Errorf("reduce: %d rounds, %d calls; want at least 2 rounds", st.ReduceRounds, reduces)
			}
			if st.Usage != mapUsage || rec.Usage.Subagents != mapUsage {
				t.Errorf("usage: subtask %+v, run %+v; the fake reported %+v", st.Usage, rec.Usage.Subagents, mapUsage)
			}
			if events["map running"] != maps || events["reduce running"] != reduces || events["dispatch ok"] != 1 {
				t.Errorf("progress events %v; want one per map and reduce call", events)
			}
			a := rec.Accounting
			if rec.Status != orchestrate.RunOK || a.SingleCallFits == nil || *a.SingleCallFits || a.NaiveInputTokens == 0 {
				t.Errorf("status %q, single call fits %v, naive %d; want ok, false and a naive baseline", rec.Status, a.SingleCallFits, a.NaiveInputTokens)
			}
			if a.MapCalls != maps || a.ReduceCalls != reduces {
				t.Errorf("accounting: %d map and %d reduce calls; want %d and %d", a.MapCalls, a.ReduceCalls, maps, reduces)
			}
			if a.SubagentInputTokens != st.PromptTokens || st.PromptTokens == 0 {
				t.Errorf("sub-agent input %d, subtask prompts %d", a.SubagentInputTokens, st.PromptTokens)
			}
			if a.OrchestratedInputTokens != a.PlannerInputTokens+a.SubagentInputTokens+a.SynthesisInputTokens {
				t.Errorf("orchestrated %d is not the sum of its phases", a.OrchestratedInputTokens)
			}
			// The local counts are of what was sent: the fake counts the
			// same tokenizer, so they agree within framing.
			if got := int(mapUsage.PromptTokens()); got < st.PromptTokens*95/100 || got > st.PromptTokens*105/100 {
				t.Errorf("the fake saw %d prompt tokens in the map and reduce calls; the record counts %d", got, st.PromptTokens)
			}
		})
	}
}

// A slice too large for the sub-agent's window is no longer a failed
// subtask: it runs over parts of the slice, each fitting, and only the
// slice's own text is sent.
func TestAskSubagentSliceOverTheWindowRunsMapReduce(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	s.SetContextWindow(smallWindow)
	cfg := windowConfig(providers["anthropic"](t, s), bigSection())
	cfg.Task = "Summarise the small section and part 1." // a summary takes part 1 whole, however large
	cfg.Planner = orchestrate.PlannerRetrieval
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if over := overWindow(s); len(over) > 0 {
		t.Errorf("requests over the window were sent: %v", over)
	}
	var big *orchestrate.SubtaskResult
	for i := range rec.Subtasks {
		if rec.Subtasks[i].ContextTokens > smallWindow {
			big = &rec.Subtasks[i]
		}
	}
	if big == nil {
		t.Fatalf("no subtask got the big section: %+v", rec.Subtasks)
	}
	if big.Status != orchestrate.StatusOK || big.MapCalls < 2 || big.ReduceCalls < 1 || big.Scope != "" {
		t.Errorf("big subtask = %s, %d map and %d reduce calls, scope %q", big.Status, big.MapCalls, big.ReduceCalls, big.Scope)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "would not fit the sub-agent's window in one request") {
		t.Errorf("no warning says why it ran over parts: %v", rec.Warnings)
	}
	for _, r := range s.Requests() {
		if c := contextOf(r); strings.Contains(c, "marker-small") && strings.Contains(c, "marker-1 ") {
			t.Error("a map part of the big slice holds text from outside it")
		}
	}
}

// A dry run counts the map requests a real run would send for an
// over-window slice, and still warns of a subtask no part of which fits.
func TestAskDryRunEstimatesMapReduce(t *testing.T) {
	cfg := windowConfig(nil, bigSection())
	cfg.Task = "Summarise the small section and part 1." // a summary takes part 1 whole, however large
	cfg.DryRun = true
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var big *orchestrate.SubtaskResult
	sum := 0
	for i := range rec.Subtasks {
		sum += rec.Subtasks[i].PromptTokens
		if rec.Subtasks[i].ContextTokens > smallWindow {
			big = &rec.Subtasks[i]
		}
	}
	if big == nil || big.MapCalls < 2 || big.PromptTokens <= big.ContextTokens {
		t.Fatalf("big subtask = %+v", big)
	}
	if rec.Accounting.SubagentInputTokens != sum || rec.Accounting.MapCalls != big.MapCalls {
		t.Errorf("accounting %d tokens, %d map calls; subtasks %d, %d", rec.Accounting.SubagentInputTokens, rec.Accounting.MapCalls, sum, big.MapCalls)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "reduce requests that join them are not in the estimate") {
		t.Errorf("no warning about the reduce estimate: %v", rec.Warnings)
	}

	cfg.SubagentMax = smallWindow - 50 // no part can fit beside this reply
	rec, err = orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "a real run would fail this subtask") {
		t.Errorf("no warning: %v", rec.Warnings)
	}
	if rec.Accounting.SubagentInputTokens != 0 {
		t.Errorf("sub-agent input %d includes prompts that would not be sent", rec.Accounting.SubagentInputTokens)
	}
}

// The LLM planner may declare scope all itself; over a context that fits
// one sub-agent request the map is one call and nothing is reduced.
func TestAskPlannerScopeAllOverOnePart(t *testing.T) {
	text, planted := corpus(6)
	s := llmtest.NewServer(t, counting())
	cfg := config(providers["anthropic"](t, s))
	cfg.Context, cfg.Task, cfg.Planner = text, "Count the mentions of "+marker+".", orchestrate.PlannerFull
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if want := fmt.Sprintf("FINAL count: %d", planted); rec.Answer != want || planted == 0 {
		t.Errorf("answer = %q, want %q", rec.Answer, want)
	}
	st := rec.Subtasks[0]
	if st.Scope != "all" || st.MapCalls != 1 || st.ReduceCalls != 0 || st.Parts != 1 {
		t.Errorf("subtask: scope %q, %d parts, %d map and %d reduce calls; want all, 1, 1, 0", st.Scope, st.Parts, st.MapCalls, st.ReduceCalls)
	}
	if got := s.Count(); got != 3 {
		t.Errorf("%d requests; want planner, one map call, synthesis", got)
	}
}
