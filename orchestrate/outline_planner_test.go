package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// vendors has the same title, Pricing, under two vendors, and sentences
// past each section's first (which the outline shows as its lead), so a
// test can tell whether a request holds the text or only the outline.
const vendors = `# Vendor review

Notes from the buying committee.

## Acme

Acme sells anvils to cartoon coyotes. Its founder lives in the desert.

### Pricing

Acme charges 40 dollars per anvil. The price has held since 1949, marker-acme-price.

## Globex

Globex sells widgets to hospitals. Nobody has audited its factory since 2019.

### Pricing

Globex charges 12 euros per seat. Volume discounts start at 100 seats, marker-globex-price.
`

// vendorPlan points each subtask at one vendor's Pricing by its outline path.
const vendorPlan = `{"subtasks": [
 {"task": "What does Acme charge?", "skill": "lookup", "context_pointers": {"sections": ["Vendor review > Acme > Pricing"], "line_ranges": []}, "answer": ""},
 {"task": "What does Globex charge?", "skill": "fact-extraction", "context_pointers": {"sections": ["Vendor review > Globex > Pricing"], "line_ranges": []}, "answer": ""}
], "reasoning": "one subtask per vendor"}`

func outlineConfig(t *testing.T, s *llmtest.Server, provider, text string) orchestrate.Config {
	cfg := config(providers[provider](t, s))
	cfg.Context, cfg.Sources = text, []string{"review.md"}
	cfg.Task = "What do Acme and Globex charge?"
	cfg.Planner = orchestrate.PlannerOutline
	return cfg
}

// subagentFor returns the one sub-agent request whose subtask is task.
func subagentFor(t *testing.T, s *llmtest.Server, task string) llmtest.RecordedRequest {
	t.Helper()
	var found []llmtest.RecordedRequest
	for _, r := range s.Requests() {
		if !isPlanner(r) && !isSynthesis(r) && subtaskOf(r.Messages[len(r.Messages)-1].Content) == task {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d sub-agent requests for %q, want 1", len(found), task)
	}
	return found[0]
}

func plannerRequests(s *llmtest.Server) []llmtest.RecordedRequest {
	var out []llmtest.RecordedRequest
	for _, r := range s.Requests() {
		if isPlanner(r) {
			out = append(out, r)
		}
	}
	return out
}

// The outline planner reads the outline, not the text: its request holds
// the unique paths and no sentence past a section's lead, and each path it
// names cuts exactly that section, so each vendor's subtask gets its own
// Pricing.
func TestAskOutlinePlannerReadsPathsNotText(t *testing.T) {
	for name := range providers {
		t.Run(name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(vendorPlan)))
			rec, err := orchestrate.Ask(context.Background(), outlineConfig(t, s, name, vendors))
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			ps := plannerRequests(s)
			if len(ps) != 1 {
				t.Fatalf("%d planner requests, want 1", len(ps))
			}
			user := ps[0].Messages[0].Content
			for _, body := range []string{"Nobody has audited its factory since 2019", "marker-acme-price", "Volume discounts start at 100 seats"} {
				if strings.Contains(user, body) || strings.Contains(ps[0].System, body) {
					t.Errorf("the outline planner request holds body text %q", body)
				}
			}
			for _, path := range []string{"Vendor review > Acme > Pricing", "Vendor review > Globex > Pricing"} {
				if !strings.Contains(user, path) {
					t.Errorf("the outline planner request lacks the path %q:\n%s", path, user)
				}
			}
			acme := subagentFor(t, s, "What does Acme charge?").Messages[0].Content
			globex := subagentFor(t, s, "What does Globex charge?").Messages[0].Content
			if !strings.Contains(acme, "marker-acme-price") || strings.Contains(acme, "marker-globex-price") {
				t.Errorf("Acme's sub-agent got the wrong Pricing:\n%s", acme)
			}
			if !strings.Contains(globex, "marker-globex-price") || strings.Contains(globex, "marker-acme-price") {
				t.Errorf("Globex's sub-agent got the wrong Pricing:\n%s", globex)
			}
			// The record names the section each slice is, by its unique path.
			for i, want := range []string{"Vendor review > Acme > Pricing", "Vendor review > Globex > Pricing"} {
				if sl := rec.Subtasks[i].Slice; sl == nil || len(sl.Matched) != 1 || sl.Matched[0].Pointer != want || sl.Matched[0].Heading != "Pricing" {
					t.Errorf("subtask %d slice = %+v; want %q", i+1, sl, want)
				}
			}
			if rec.Planner != orchestrate.PlannerOutline || rec.PlannerMode != orchestrate.PlannerOutline || !strings.Contains(rec.PlannerReason, "the outline it reads") {
				t.Errorf("planner %q, mode %q, reason %q", rec.Planner, rec.PlannerMode, rec.PlannerReason)
			}
			// The planner's input is the outline prompt, counted as sent.
			want := tokens.Count(ps[0].System) + tokens.Count(user)
			if rec.Accounting.PlannerInputTokens != want {
				t.Errorf("planner input = %d, want the outline request's %d", rec.Accounting.PlannerInputTokens, want)
			}
		})
	}
}

// With several documents each is outlined on its own, its paths begin with
// its name, and a path's lines map back into the combined context: two
// files with a Pricing section each get their own. A path without its
// document's name is taken when one document alone has it.
func TestAskOutlinePlannerOverSeveralDocuments(t *testing.T) {
	a := "# Acme\n\nAcme sells anvils. Its founder lives in the desert.\n\n## Pricing\n\nAnvils cost 40 dollars. Held since 1949, marker-a-price.\n"
	b := "Preamble of the Globex file.\n\n# Globex\n\nGlobex sells widgets. It was founded in 1990.\n\n## Pricing\n\nSeats cost 12 euros. Discounts from 100 seats, marker-b-price.\n\n## Support\n\nSupport answers in a day. Weekends are closed, marker-b-support.\n"
	combined, _ := slice.Combine([]slice.NamedDoc{{Name: "a.md", Data: []byte(a)}, {Name: "b.md", Data: []byte(b)}})
	plan := `{"subtasks": [
 {"task": "Acme price", "skill": "lookup", "context_pointers": {"sections": ["a.md > Acme > Pricing"], "line_ranges": []}, "answer": ""},
 {"task": "Globex price", "skill": "lookup", "context_pointers": {"sections": ["b.md > Globex > Pricing"], "line_ranges": []}, "answer": ""},
 {"task": "Globex support", "skill": "lookup", "context_pointers": {"sections": ["Globex > Support"], "line_ranges": []}, "answer": ""}
], "reasoning": "one per fact"}`
	s := llmtest.NewServer(t, script(llmtest.Text(plan)))
	cfg := outlineConfig(t, s, "openai", string(combined))
	cfg.Sources = []string{"a.md", "b.md"}
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	user := plannerRequests(s)[0].Messages[0].Content
	if !strings.Contains(user, `Document "a.md"`) || !strings.Contains(user, `Document "b.md"`) || !strings.Contains(user, "b.md > Globex > Pricing [lines 7-10") {
		t.Errorf("the outline does not show each document with its own lines:\n%s", user)
	}
	for task, want := range map[string]string{"Acme price": "marker-a-price", "Globex price": "marker-b-price", "Globex support": "marker-b-support"} {
		got := subagentFor(t, s, task).Messages[0].Content
		for _, m := range []string{"marker-a-price", "marker-b-price", "marker-b-support"} {
			if strings.Contains(got, m) != (m == want) {
				t.Errorf("%s: slice holds %s = %v:\n%s", task, m, !(m == want), got)
			}
		}
	}
	if len(rec.PlannerOutputs) != 1 {
		t.Errorf("%d planner outputs; a path without its document's name that one document has needs no repair", len(rec.PlannerOutputs))
	}
}

// A path that is not in the outline is sent back once, quoting it; the
// repaired plan is used.
func TestAskOutlinePlannerRepairsAnUnknownPath(t *testing.T) {
	bad := strings.Replace(vendorPlan, "Vendor review > Globex > Pricing", "Globex > Price list", 1)
	s := llmtest.NewServer(t, script(llmtest.Text(bad), llmtest.Text(vendorPlan)))
	rec, err := orchestrate.Ask(context.Background(), outlineConfig(t, s, "anthropic", vendors))
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	ps := plannerRequests(s)
	if len(ps) != 2 {
		t.Fatalf("%d planner requests, want 2 (one repair)", len(ps))
	}
	repair := ps[1].Messages[len(ps[1].Messages)-1].Content
	if !strings.Contains(repair, `section "Globex > Price list" is not a path in the outline`) {
		t.Errorf("the repair request does not quote the unknown path:\n%s", repair)
	}
	if g := subagentFor(t, s, "What does Globex charge?").Messages[0].Content; !strings.Contains(g, "marker-globex-price") || strings.Contains(g, "marker-acme-price") {
		t.Errorf("after the repair Globex's sub-agent got:\n%s", g)
	}
	if rec.Planner != orchestrate.PlannerOutline {
		t.Errorf("planner = %q", rec.Planner)
	}
}

// The outline planner has not read the text, so an answer it writes itself
// is not used: the subtask becomes a lookup, on the section it names or,
// naming none, on the section that ranks best for its question, and the
// record says so.
func TestAskOutlineSelfAnswerBecomesALookup(t *testing.T) {
	plan := `{"subtasks": [
 {"task": "What did revenue rise to?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "From memory: 99 million"},
 {"task": "How many people work here?", "skill": "self", "context_pointers": {"sections": ["Quarterly report > Costs > Staffing"], "line_ranges": []}, "answer": "About 100"}
], "reasoning": "two lookups"}`
	s := llmtest.NewServer(t, script(llmtest.Text(plan)))
	cfg := config(providers["openai"](t, s))
	cfg.Planner = orchestrate.PlannerOutline
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if n := len(plannerRequests(s)); n != 1 {
		t.Errorf("%d planner requests; a self answer is fixed without a repair round", n)
	}
	for i, want := range []string{"marker-revenue", "marker-staffing"} {
		st := rec.Subtasks[i]
		if st.Mode != orchestrate.ModeDelegated || st.Skill != "lookup" || st.ResolvedSkill != "lookup" {
			t.Errorf("subtask %d: mode %q skill %q (%q); want a delegated lookup", i+1, st.Mode, st.Skill, st.ResolvedSkill)
		}
		if strings.Contains(st.Output, "From memory") || strings.Contains(st.Output, "About 100") {
			t.Errorf("subtask %d kept the answer from memory: %q", i+1, st.Output)
		}
		got := subagentFor(t, s, st.Task).Messages[0].Content
		if !strings.Contains(got, want) || strings.Contains(got, "marker-outlook") {
			t.Errorf("subtask %d's lookup slice lacks %s or holds unrelated sections:\n%s", i+1, want, got)
		}
	}
	w := strings.Join(rec.Warnings, "\n")
	if strings.Count(w, `runs as a "lookup" subtask`) != 2 {
		t.Errorf("warnings do not record both conversions: %v", rec.Warnings)
	}
	for _, r := range s.Requests() {
		if isSynthesis(r) && (strings.Contains(r.Messages[0].Content, "From memory") || strings.Contains(r.Messages[0].Content, "About 100")) {
			t.Error("the synthesis was given the planner's answer from memory")
		}
	}
}

// auto runs the full planner while its request takes at most half of the
// window left after the reply on a short context, and the outline planner,
// by cost, on a larger one, even when the full request would still fit.
func TestAskAutoPicksFullOrOutlineByTheShare(t *testing.T) {
	const window = 20000
	large := bigDoc(12, 450)
	n := tokens.Count(large)
	room := int(orchestrate.FullPlannerShare * float64(window-orchestrate.DefaultPlannerTokens))
	if n < room || n+n/10+orchestrate.DefaultPlannerTokens > window {
		t.Fatalf("the large document (%d tokens) must be over the share (%d) and fit the window", n, room)
	}
	cases := []struct {
		name, text, want, body string
		reply                  string
	}{
		{"small", doc, orchestrate.PlannerLLM, "driven by the enterprise tier", planJSON},
		{"large", large, orchestrate.PlannerOutline, "w996 w0 w1", partPlan},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(tc.reply)))
			cfg := windowConfig(providers["anthropic"](t, s), tc.text)
			cfg.Window = window
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			named := "50% of the 20000-token window"
			if tc.want == orchestrate.PlannerOutline {
				named = fmt.Sprintf("single call %d tokens", rec.Accounting.SingleCallInputTokens)
			}
			if rec.Planner != tc.want || !strings.Contains(rec.PlannerReason, named) {
				t.Errorf("planner %q, reason %q; want %q and the share named", rec.Planner, rec.PlannerReason, tc.want)
			}
			ps := plannerRequests(s)
			if len(ps) != 1 {
				t.Fatalf("%d planner requests", len(ps))
			}
			if got := strings.Contains(ps[0].Messages[0].Content, tc.body); got != (tc.want == orchestrate.PlannerLLM) {
				t.Errorf("planner request holds the body text: %v", got)
			}
		})
	}
}

// A model planner that answers garbage twice: auto falls back to the
// retrieval planner and answers with a warning; --planner outline fails the
// run with the paid usage in the record.
func TestAskOutlinePlannerGarbageTwice(t *testing.T) {
	large := bigDoc(12, 450)
	for _, mode := range []string{orchestrate.PlannerAuto, orchestrate.PlannerOutline} {
		t.Run(mode, func(t *testing.T) {
			s := llmtest.NewServer(t, garbage())
			cfg := windowConfig(providers["openai"](t, s), large)
			cfg.Planner, cfg.Window = mode, 20000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if n := len(plannerRequests(s)); n != 2 {
				t.Errorf("%d planner requests, want 2 (one repair)", n)
			}
			if !rec.ModelCalled || rec.Usage.Planner.InputTokens == 0 || len(rec.PlannerOutputs) != 2 {
				t.Errorf("model_called %v, planner usage %+v, outputs %d", rec.ModelCalled, rec.Usage.Planner, len(rec.PlannerOutputs))
			}
			if mode == orchestrate.PlannerOutline {
				if !errors.Is(err, orchestrate.ErrPlan) || rec.Status != orchestrate.RunFailed {
					t.Errorf("err %v, status %q; want ErrPlan, failed", err, rec.Status)
				}
				return
			}
			if err != nil || rec.Status != orchestrate.RunOK || rec.Answer == "" {
				t.Fatalf("err %v, status %q, answer %q", err, rec.Status, rec.Answer)
			}
			if rec.Planner != orchestrate.PlannerRetrieval || !strings.Contains(rec.PlannerReason, "outline planner failed") {
				t.Errorf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
			}
			if !strings.Contains(strings.Join(rec.Warnings, "\n"), "the outline planner failed") {
				t.Errorf("no fallback warning: %v", rec.Warnings)
			}
		})
	}
}

// manyTops is a document of n top-level headings: its smallest outline
// grows with n, so a small window cannot hold it.
func manyTops(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "# Chapter %d on the subject of item %d\n\nText %d.\n\n", i+1, i+1, i+1)
	}
	return b.String()
}

// An outline that does not fit even at the top level: auto plans with the
// retrieval planner and says why; --planner outline fails before any call.
func TestAskOutlineTooLarge(t *testing.T) {
	text := manyTops(1500)
	for _, mode := range []string{orchestrate.PlannerAuto, orchestrate.PlannerOutline} {
		t.Run(mode, func(t *testing.T) {
			s := llmtest.NewServer(t, script(llmtest.Text(partPlan)))
			cfg := windowConfig(providers["anthropic"](t, s), text)
			cfg.Planner, cfg.Window = mode, 8000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if n := len(plannerRequests(s)); n != 0 {
				t.Errorf("%d planner requests sent", n)
			}
			if mode == orchestrate.PlannerOutline {
				if !errors.Is(err, outline.ErrTooLarge) || rec.ModelCalled || rec.Status != orchestrate.RunFailed {
					t.Errorf("err %v, model_called %v, status %q", err, rec.ModelCalled, rec.Status)
				}
				return
			}
			if err != nil && !errors.Is(err, orchestrate.ErrPartial) {
				t.Fatalf("Ask: %v", err)
			}
			if rec.Planner != orchestrate.PlannerRetrieval || !strings.Contains(rec.PlannerReason, "top-level headings") {
				t.Errorf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
			}
			if !strings.Contains(strings.Join(rec.Warnings, "\n"), "the outline planner could not run") {
				t.Errorf("no warning: %v", rec.Warnings)
			}
		})
	}
}

// A dry run's planner input follows the planner a real run would pick: the
// full request's count for a small document, the outline request's for a
// large one, and planner_reason says it is an estimate.
func TestAskDryRunEstimatesThePlannerAutoWouldPick(t *testing.T) {
	large := bigDoc(12, 450)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"small", doc, "the LLM planner"},
		{"large", large, "the outline planner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := windowConfig(nil, tc.text)
			cfg.Window = 20000
			rec, err := orchestrate.Ask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			a := rec.Accounting
			if rec.Planner != orchestrate.PlannerRetrieval || !strings.Contains(rec.PlannerReason, "a real run would use "+tc.want) || !strings.Contains(rec.PlannerReason, "estimate") {
				t.Errorf("planner %q, reason %q", rec.Planner, rec.PlannerReason)
			}
			switch tc.name {
			case "small":
				if a.PlannerInputTokens <= a.ContextTokens {
					t.Errorf("planner input %d; the full planner reads the whole context of %d tokens", a.PlannerInputTokens, a.ContextTokens)
				}
			case "large":
				if a.PlannerInputTokens == 0 || a.PlannerInputTokens*4 > a.ContextTokens {
					t.Errorf("planner input %d; want the outline prompt, well under the context's %d", a.PlannerInputTokens, a.ContextTokens)
				}
			}
		})
	}
}

// A corpus of 36 documents, ten times the planner's window, is planned from
// its outline and answered: no request the fake sees is over its window,
// and the one document the plan names is all its sub-agent gets.
func TestAskOutlineOverACorpusTenTimesTheWindow(t *testing.T) {
	var docs []slice.NamedDoc
	var names []string
	for d := range 36 {
		name := fmt.Sprintf("report-%02d.md", d+1)
		var b strings.Builder
		fmt.Fprintf(&b, "# Report %d\n\nThe report of unit %d, marker-doc-%d.\n\n", d+1, d+1, d+1)
		for p := range 4 {
			fmt.Fprintf(&b, "## Part %d\n\nPart %d of unit %d. ", p+1, p+1, d+1)
			for j := range 290 {
				fmt.Fprintf(&b, "w%d ", (d*1160+p*290+j)%997)
			}
			b.WriteString("\n\n")
		}
		docs = append(docs, slice.NamedDoc{Name: name, Data: []byte(b.String())})
		names = append(names, name)
	}
	combined, _ := slice.Combine(docs)
	if n := tokens.Count(string(combined)); n < 10*smallWindow {
		t.Fatalf("the corpus is only %d tokens", n)
	}
	// The planner copies the path of report 17's top heading from the
	// outline it was sent, as a model would.
	pick := regexp.MustCompile(`(?m)^(report-17\.md > Report 17) \[lines`)
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case isPlanner(r):
			m := pick.FindStringSubmatch(r.Messages[0].Content)
			if m == nil {
				return llmtest.Text("no such path in the outline")
			}
			return llmtest.Text(`{"subtasks": [{"task": "Summarise report 17", "skill": "summarization", "context_pointers": {"sections": ["` + m[1] + `"], "line_ranges": []}, "answer": ""}], "reasoning": "one"}`)
		case isSynthesis(r):
			return llmtest.Text("FINAL")
		default:
			return llmtest.Text("finding for " + subtaskOf(r.Messages[0].Content))
		}
	}))
	s.SetContextWindow(smallWindow)
	cfg := windowConfig(providers["openai"](t, s), string(combined))
	cfg.Sources, cfg.Task = names, "Summarise report 17"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
	}
	if over := overWindow(s); len(over) > 0 {
		t.Errorf("requests over the window were sent: %v", over)
	}
	if rec.Planner != orchestrate.PlannerOutline || rec.Status != orchestrate.RunOK || len(rec.PlannerOutputs) != 1 {
		t.Errorf("planner %q, status %q, %d planner outputs; reason %q", rec.Planner, rec.Status, len(rec.PlannerOutputs), rec.PlannerReason)
	}
	got := subagentFor(t, s, "Summarise report 17").Messages[0].Content
	if !strings.Contains(got, "marker-doc-17.") || strings.Contains(got, "marker-doc-16.") || strings.Contains(got, "marker-doc-18.") {
		t.Errorf("the sub-agent was not sent report 17 alone (%d bytes)", len(got))
	}
	if a := rec.Accounting; a.PlannerInputTokens >= smallWindow || a.SingleCallFits == nil || *a.SingleCallFits {
		t.Errorf("planner input %d, single call fits %v", a.PlannerInputTokens, a.SingleCallFits)
	}
}
