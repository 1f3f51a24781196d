package orchestrate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// stationLogs is 40 station logs of 6 sections each: 280 headings, each
// section title unique but "Crew Notes", which every station has.
func stationLogs() string {
	var b strings.Builder
	for i := range 40 {
		name := fmt.Sprintf("Station%02d", i)
		if i == 17 {
			name = "Dosduket"
		}
		fmt.Fprintf(&b, "# %s station log\n\nDaily log of the %s station.\n\n", name, name)
		for _, sec := range []string{"Basin Maintenance Backlog", "Pump Readings", "Valve Inventory", "Power Draw", "Shift Handover"} {
			fmt.Fprintf(&b, "## %s %s\n\nmarker-%s-%s. ", name, sec, name, strings.ReplaceAll(sec, " ", ""))
			b.WriteString(strings.Repeat("Routine entry with nothing of note. ", 30))
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "## Crew Notes\n\nmarker-%s-crew.\n\n", name)
	}
	return b.String()
}

// A collapsed outline shows only the 40 logs; a plan naming a deeper
// section by its unique title is accepted as it is and cuts that section,
// and a title several sections have is sent back once with the candidates.
func TestAskOutlineAcceptsAUniqueTitle(t *testing.T) {
	good := `{"subtasks": [{"task": "What is in the Dosduket backlog?", "skill": "lookup", "context_pointers": {"sections": ["Dosduket Basin Maintenance Backlog"]}}], "reasoning": "r"}`
	amb := `{"subtasks": [{"task": "What is in the crew notes?", "skill": "lookup", "context_pointers": {"sections": ["Crew Notes"]}}], "reasoning": "r"}`
	fixed := `{"subtasks": [{"task": "What is in the crew notes?", "skill": "lookup", "context_pointers": {"sections": ["Dosduket station log > Crew Notes"]}}], "reasoning": "r"}`
	for _, tc := range []struct {
		name, task string
		replies    []string
		marker     string
	}{
		{"unique", "What is in the Dosduket backlog?", []string{good}, "marker-Dosduket-BasinMaintenanceBacklog"},
		{"ambiguous", "What is in the crew notes?", []string{amb, fixed}, "marker-Dosduket-crew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies []llmtest.Reply
			for _, r := range tc.replies {
				replies = append(replies, llmtest.Text(r))
			}
			s := llmtest.NewServer(t, script(replies...))
			cfg := windowConfig(providers["anthropic"](t, s), stationLogs())
			cfg.Planner, cfg.Window = orchestrate.PlannerOutline, 9000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if !strings.Contains(rec.PlannerReason, "40 of 280 headings") {
				t.Fatalf("reason %q; want the outline collapsed to the 40 logs", rec.PlannerReason)
			}
			ps := plannerRequests(s)
			if len(ps) != len(tc.replies) {
				t.Fatalf("%d planner requests, want %d", len(ps), len(tc.replies))
			}
			if tc.name == "ambiguous" {
				repair := ps[1].Messages[len(ps[1].Messages)-1].Content
				if !strings.Contains(repair, `"Crew Notes" names 40 sections`) || !strings.Contains(repair, `"Station00 station log > Crew Notes"`) {
					t.Errorf("the repair does not list the candidates:\n%s", repair)
				}
			}
			sub := subagentFor(t, s, tc.task)
			body := sub.Messages[0].Content
			if !strings.Contains(body, tc.marker) || strings.Contains(body, "marker-Station00") || strings.Contains(body, "marker-Dosduket-PumpReadings") {
				t.Errorf("the sub-agent's slice is not the one section:\n%.400s", body)
			}
			if rec.Subtasks[0].Slice == nil || rec.Subtasks[0].Slice.Fallback {
				t.Errorf("slice %+v, want no fallback", rec.Subtasks[0].Slice)
			}
		})
	}
}

// A planner that saw only the 40 logs asks to see one log's sections, is
// shown them in one more counted call, and plans with a path it was shown;
// a plan written directly, with "expand": [], is used as it is.
func TestAskOutlineExpandsACollapsedHeading(t *testing.T) {
	expand := `{"subtasks": [], "expand": ["Dosduket station log"], "reasoning": ""}`
	planned := `{"subtasks": [{"task": "What do the Dosduket pumps read?", "skill": "lookup", "context_pointers": {"sections": ["Dosduket station log > Dosduket Pump Readings"]}}], "expand": [], "reasoning": "r"}`
	for _, tc := range []struct {
		name    string
		replies []string
	}{
		{"expand", []string{expand, planned}},
		{"direct", []string{planned}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies []llmtest.Reply
			for _, r := range tc.replies {
				replies = append(replies, llmtest.Text(r))
			}
			s := llmtest.NewServer(t, script(replies...))
			cfg := windowConfig(providers["openai"](t, s), stationLogs())
			// auto caps the outline at a fifth of the single call, which
			// collapses it to the 40 logs.
			cfg.Window = 200000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if rec.Planner != orchestrate.PlannerOutline || !strings.Contains(rec.PlannerReason, "40 of 280 headings") {
				t.Fatalf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
			}
			ps := plannerRequests(s)
			if len(ps) != len(tc.replies) {
				t.Fatalf("%d planner requests, want %d", len(ps), len(tc.replies))
			}
			if !strings.Contains(ps[0].System, `"expand"`) || strings.Contains(ps[0].Messages[0].Content, "Dosduket Pump Readings") {
				t.Errorf("the first planner request does not offer an expansion, or shows the hidden sections")
			}
			if tc.name == "expand" {
				shown := ps[1].Messages[len(ps[1].Messages)-1].Content
				if !strings.Contains(shown, "Dosduket station log > Dosduket Pump Readings [lines") || strings.Contains(shown, "Station03") {
					t.Errorf("the expansion does not show the log's sections alone:\n%s", shown)
				}
				if !strings.Contains(rec.PlannerReason, "subsections of 1 headings") || len(rec.PlannerOutputs) != 2 {
					t.Errorf("reason %q, %d outputs", rec.PlannerReason, len(rec.PlannerOutputs))
				}
				if rec.Accounting.PlannerInputTokens <= int(ps[0].Usage.InputTokens)*3/2 {
					t.Errorf("planner input %d does not count both calls (the first: %d)", rec.Accounting.PlannerInputTokens, ps[0].Usage.InputTokens)
				}
			}
			body := subagentFor(t, s, "What do the Dosduket pumps read?").Messages[0].Content
			if !strings.Contains(body, "marker-Dosduket-PumpReadings") || strings.Contains(body, "marker-Dosduket-BasinMaintenanceBacklog") {
				t.Errorf("the sub-agent's slice is not the one section:\n%.300s", body)
			}
		})
	}
}
