package orchestrate_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// TestRecordDocumentMapCombined: two documents combined, the record holds
// each one's line range in the context and its own sections, at their own
// levels, and every slice's matched range lies inside its document.
func TestRecordDocumentMapCombined(t *testing.T) {
	other := "# Notes\n\nIntro.\n\n## Risks\n\nmarker-risks here.\n\n### Deep\n\nx\n\n#### Deeper\n\ny\n"
	combined, parts := slice.Combine([]slice.NamedDoc{{Name: "report.md", Data: []byte(doc)}, {Name: "notes.md", Data: []byte(other)}})
	cfg := config(nil)
	cfg.Context, cfg.Parts, cfg.Sources = string(combined), parts, []string{"report.md", "notes.md"}
	cfg.Planner = orchestrate.PlannerRetrieval
	rec, _ := orchestrate.Ask(context.Background(), cfg)
	// A caller that passes no parts (the MCP server) gets the same map,
	// found from the combination's level-1 headings.
	cfg.Parts = nil
	again, _ := orchestrate.Ask(context.Background(), cfg)
	if a, b := fmt.Sprint(rec.DocumentMap), fmt.Sprint(again.DocumentMap); a != b {
		t.Errorf("without parts the map is\n%s\nwith them\n%s", b, a)
	}
	if len(rec.DocumentMap) != 2 {
		t.Fatalf("document map has %d documents, want 2: %+v", len(rec.DocumentMap), rec.DocumentMap)
	}
	r, n := rec.DocumentMap[0], rec.DocumentMap[1]
	if r.Name != "report.md" || n.Name != "notes.md" || r.StartLine != 1 || n.StartLine != r.EndLine+1 {
		t.Errorf("documents %+v / %+v", r, n)
	}
	if n.Bytes != len(combined)-strings.Index(string(combined), "# notes.md") {
		t.Errorf("notes.md bytes = %d, want %d", n.Bytes, len(combined)-strings.Index(string(combined), "# notes.md"))
	}
	var titles []string
	for _, s := range r.Sections {
		titles = append(titles, fmt.Sprintf("%d %s %d-%d", s.Level, s.Title, s.StartLine, s.EndLine))
	}
	// Under a lone title two levels are kept. Line numbers are the
	// context's: the added "# report.md" heading is line 1.
	want := "1 Quarterly report 2-20|2 Revenue 6-9|2 Costs 10-17|3 Staffing 14-17|2 Outlook 18-20"
	if got := strings.Join(titles, "|"); got != want {
		t.Errorf("report.md sections\n got %s\nwant %s", got, want)
	}
	// Deeper, a fourth level, is left out.
	if len(n.Sections) != 3 || n.Sections[2].Title != "Deep" || n.Sections[2].EndLine != n.EndLine {
		t.Errorf("notes.md sections %+v", n.Sections)
	}
}

// TestRecordDocumentMapBounded: a document of 500 sections keeps
// MaxMapSections of them and says how many it left out.
func TestRecordDocumentMapBounded(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "# Part %d\n\ntext %d\n\n", i+1, i+1)
	}
	cfg := config(nil)
	cfg.Context = b.String()
	cfg.Planner = orchestrate.PlannerRetrieval
	rec, _ := orchestrate.Ask(context.Background(), cfg)
	if len(rec.DocumentMap) != 1 {
		t.Fatalf("document map %d documents", len(rec.DocumentMap))
	}
	d := rec.DocumentMap[0]
	if d.Name != "report.md" || len(d.Sections) != orchestrate.MaxMapSections || d.SectionsOmitted != 500-orchestrate.MaxMapSections {
		t.Errorf("name %q, %d sections, %d omitted", d.Name, len(d.Sections), d.SectionsOmitted)
	}
	if d.Bytes != b.Len() || d.StartLine != 1 {
		t.Errorf("bytes %d (want %d), start %d", d.Bytes, b.Len(), d.StartLine)
	}
}

// TestRecordCalls: every call is in the record with its phase, subtask and
// times, and a sub-agent call the retry policy sent twice carries its
// failed attempt with the error and the wait.
func TestRecordCalls(t *testing.T) {
	var failed atomic.Bool
	base := script(llmtest.Text(planJSON))
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if !isPlanner(r) && !isSynthesis(r) && strings.Contains(r.Messages[0].Content, "Your subtask: Summarise") && failed.CompareAndSwap(false, true) {
			return llmtest.Overloaded()
		}
		return base.Respond(r)
	}))
	var waits []time.Duration
	m := llm.WithRetry(providers["anthropic"](t, s), llm.RetryPolicy{MaxAttempts: 3, BaseDelay: 40 * time.Millisecond,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	rec, err := orchestrate.Ask(context.Background(), config(m))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	var got []string
	for _, c := range rec.Calls {
		got = append(got, fmt.Sprintf("%s/%d/%d", c.Phase, c.Subtask, c.Attempts))
		if c.EndMS < c.StartMS || c.StartMS < 0 || c.EndMS > rec.DurationMS+1 {
			t.Errorf("call %+v: times outside the run of %d ms", c, rec.DurationMS)
		}
		if c.Status != orchestrate.StatusOK || c.PromptTokens <= 0 || c.Usage.InputTokens <= 0 {
			t.Errorf("call %+v", c)
		}
	}
	if len(rec.Calls) != 4 || rec.Calls[0].Phase != orchestrate.CallPlanner || rec.Calls[3].Phase != orchestrate.CallSynthesis {
		t.Fatalf("calls %v, want planner, two sub-agents, synthesis", got)
	}
	for _, c := range rec.Calls[1:3] {
		if c.Phase != orchestrate.CallSubagent || c.StartMS < rec.Calls[0].EndMS || c.EndMS > rec.Calls[3].StartMS {
			t.Errorf("sub-agent call %+v out of order with the planner and the synthesis", c)
		}
		retried := c.Subtask == 2
		if retried != (c.Attempts == 2) || retried != (len(c.Retries) == 1) {
			t.Errorf("subtask %d: %d attempts, retries %+v", c.Subtask, c.Attempts, c.Retries)
		}
		if retried && len(c.Retries) == 1 {
			r := c.Retries[0]
			if r.Attempt != 1 || !strings.Contains(r.Error, "529") || len(waits) != 1 || r.WaitMS != waits[0].Milliseconds() || r.AtMS < c.StartMS || r.AtMS > c.EndMS {
				t.Errorf("retry %+v, policy waits %v", r, waits)
			}
			if c.Attempts != rec.Subtasks[2].Attempts {
				t.Errorf("call attempts %d, subtask attempts %d", c.Attempts, rec.Subtasks[2].Attempts)
			}
		}
	}
}
