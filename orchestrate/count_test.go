package orchestrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// realContext is real markdown of about size bytes: the bench corpus and the
// docs, repeated, as baton would be handed them.
func realContext(t *testing.T, size int) string {
	var files []string
	for _, pat := range []string{"../internal/bench/testdata/corpus/*.md", "../docs/*.md"} {
		fs, _ := filepath.Glob(pat)
		for _, f := range fs {
			// A fixed mix: the outline's own text (titles and first
			// words, counted apart from the context) grows with the
			// headings the mix holds, so a document full of small
			// sections added to the corpus would move the ratios the
			// tests bound without any change in how baton counts.
			if b := filepath.Base(f); b != "gopls-analyzers.md" && b != "rclone-rc.md" {
				files = append(files, f)
			}
		}
	}
	if len(files) < 5 {
		t.Fatalf("found %d documents", len(files))
	}
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		data, err := os.ReadFile(files[i%len(files)])
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

// TestDryRunTokenizesTheContextOnce: the context figure, the single-call and
// naive baselines, the full planner's request and a subtask that falls back
// to the whole context all need the context's count; it is tokenized once
// (it was five times), and every figure is still the count of the text it
// stands for.
func TestDryRunTokenizesTheContextOnce(t *testing.T) {
	ctx := realContext(t, 400<<10)
	var read atomic.Int64
	cfg := orchestrate.Config{
		Task:    "Zqxv wibble frobnicate?", // no section matches: the subtask falls back to the whole context
		Context: ctx, DryRun: true, Window: 10_000_000, Planner: orchestrate.PlannerFull,
		Counter: tokens.Default().Metered(&read),
	}
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	// The outline's own text is counted once per rendering tried; it now
	// lists the passages of the mix's two sections too large to send whole
	// (36 lines), which took the ratio from 1.25 to 1.30.
	if got := read.Load(); got > int64(len(ctx))*135/100 {
		t.Errorf("the dry run tokenized %d bytes for a %d-byte context (%.2f times)", got, len(ctx), float64(got)/float64(len(ctx)))
	}
	c := tokens.Default()
	a := rec.Accounting
	if want := c.Count(ctx); a.ContextTokens != want {
		t.Errorf("context_tokens = %d, want %d", a.ContextTokens, want)
	}
	if want := c.Count("<context>\n" + ctx + "</context>\n\nTask: " + cfg.Task + "\n"); a.SingleCallInputTokens != want {
		t.Errorf("single_call_input_tokens = %d, want %d", a.SingleCallInputTokens, want)
	}
	if a.PlannerInputTokens == 0 || a.PlannerInputTokens <= a.ContextTokens {
		t.Errorf("planner input %d: want the full planner's prompt, more than the context's %d", a.PlannerInputTokens, a.ContextTokens)
	}
	if len(rec.Subtasks) != 1 || rec.Subtasks[0].Slice == nil || !rec.Subtasks[0].Slice.Fallback {
		t.Fatalf("want one subtask on the whole context, got %+v", rec.Subtasks)
	}
	if got := rec.Subtasks[0].ContextTokens; got != a.ContextTokens {
		t.Errorf("the fallback slice counts %d, the context %d", got, a.ContextTokens)
	}
}

// TestCountedPromptsMatchWhatWasSent: in a real run against the fake, the
// planner's and each sub-agent's counted prompt is the count of what the
// wire carried, though the context inside them was counted once.
func TestCountedPromptsMatchWhatWasSent(t *testing.T) {
	ctx := realContext(t, 64<<10)
	plan := `{"subtasks": [{"task": "Summarise it", "skill": "summarization", "context_pointers": {"sections": ["Zqxv nothing"]}}], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(plan)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Context, cfg.Window = ctx, 10_000_000
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	c := tokens.Default()
	sent := func(r llmtest.RecordedRequest) int {
		n := c.Count(r.System)
		for _, m := range r.Messages {
			n += c.Count(m.Content)
		}
		return n
	}
	var planner, sub int
	for _, r := range s.Requests() {
		switch {
		case isPlanner(r):
			planner += sent(r)
		case !isSynthesis(r):
			sub += sent(r)
		}
	}
	if rec.Accounting.PlannerInputTokens != planner {
		t.Errorf("planner input counted %d, the requests sent carry %d", rec.Accounting.PlannerInputTokens, planner)
	}
	if len(rec.Subtasks) != 1 || !rec.Subtasks[0].Slice.Fallback || rec.Subtasks[0].PromptTokens != sub {
		t.Errorf("subtask prompt counted %d (fallback %v), sent %d", rec.Subtasks[0].PromptTokens, rec.Subtasks[0].Slice.Fallback, sub)
	}
}

// TestDryRunOverTheWindowTokenizesTheContextOnce: a context over the
// window takes the outline planner, whose outline counts every section,
// and its fallback subtask runs as map-reduce, whose split counts every
// line and whose map requests each hold a part. All of them are answered
// from the one counting of the context (it was 4.6 readings), and the
// figures are still exact.
func TestDryRunOverTheWindowTokenizesTheContextOnce(t *testing.T) {
	ctx := realContext(t, 400<<10)
	var read atomic.Int64
	cfg := orchestrate.Config{
		Task:    "Zqxv wibble frobnicate?",
		Context: ctx, DryRun: true, Window: 40_000,
		Counter: tokens.Default().Metered(&read),
	}
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if !strings.Contains(rec.PlannerReason, "the outline it reads") {
		t.Fatalf("planner reason %q; the test wants the outline planner's estimate (a context over the window)", rec.PlannerReason)
	}
	if len(rec.Subtasks) == 0 || rec.Subtasks[0].Parts < 2 {
		t.Fatalf("want a subtask run as map-reduce over several parts, got %+v", rec.Subtasks)
	}
	// The outline's own text is counted once per rendering tried; it now
	// lists the passages of the mix's two sections too large to send whole
	// (36 lines), which took the ratio from 1.25 to 1.30.
	if got := read.Load(); got > int64(len(ctx))*135/100 {
		t.Errorf("the dry run tokenized %d bytes for a %d-byte context (%.2f times)", got, len(ctx), float64(got)/float64(len(ctx)))
	}
	if want := tokens.Default().Count(ctx); rec.Accounting.ContextTokens != want {
		t.Errorf("context_tokens = %d, want %d", rec.Accounting.ContextTokens, want)
	}
}

// TestMapRequestCountsMatchWhatWasSent: map requests over parts of the
// context are counted from the context's index with their wrapping, not
// tokenized again; the record's prompt tokens are still exactly the count
// of what the map and reduce requests carried.
func TestMapRequestCountsMatchWhatWasSent(t *testing.T) {
	ctx := realContext(t, 64<<10)
	s := llmtest.NewServer(t, script(llmtest.Text(`{"subtasks": [], "reasoning": "r"}`)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Task = "Zqxv wibble frobnicate?" // no heading matches: the one subtask falls back to the whole context
	cfg.Context, cfg.Window, cfg.Planner = ctx, 6000, orchestrate.PlannerRetrieval
	cfg.SubagentMax, cfg.SynthesisMax = 500, 500
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
	}
	if len(rec.Subtasks) != 1 || rec.Subtasks[0].MapCalls < 3 {
		t.Fatalf("want one subtask run over several parts, got %+v", rec.Subtasks)
	}
	c := tokens.Default()
	sent, maps := 0, 0
	for _, r := range s.Requests() {
		if isPlanner(r) || isSynthesis(r) {
			continue
		}
		if !isReduce(r) {
			maps++
		}
		sent += c.Count(r.System)
		for _, m := range r.Messages {
			sent += c.Count(m.Content)
		}
	}
	st := rec.Subtasks[0]
	if maps != st.MapCalls || st.PromptTokens != sent {
		t.Errorf("subtask: %d map calls counted %d prompt tokens; the %d sent carry %d", st.MapCalls, st.PromptTokens, maps, sent)
	}
}

// TestOutlinePromptCountMatchesWhatWasSent: the outline planner's prompt
// holds the outline, which was counted when it was built; the prompt is
// counted as its own text plus that count, and is still exactly the count
// of what was sent.
func TestOutlinePromptCountMatchesWhatWasSent(t *testing.T) {
	ctx := realContext(t, 300<<10)
	s := llmtest.NewServer(t, script(llmtest.Text(`{"subtasks": [{"task": "Summarise it", "skill": "summarization", "context_pointers": {"line_ranges": [[1, 40]]}}], "reasoning": "r"}`)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Context, cfg.Window, cfg.Planner = ctx, 60_000, orchestrate.PlannerOutline
	var read atomic.Int64
	cfg.Counter = tokens.Default().Metered(&read)
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v (warnings %v)", err, rec.Warnings)
	}
	c := tokens.Default()
	planner, outlineBytes := 0, 0
	for _, r := range s.Requests() {
		if !isPlanner(r) {
			continue
		}
		planner += c.Count(r.System)
		for _, m := range r.Messages {
			planner += c.Count(m.Content)
			outlineBytes = max(outlineBytes, len(m.Content))
		}
	}
	if outlineBytes < 8<<10 {
		t.Fatalf("the outline planner's prompt is %d bytes; the test wants a large outline", outlineBytes)
	}
	if rec.Accounting.PlannerInputTokens != planner {
		t.Errorf("planner input counted %d, the requests sent carry %d", rec.Accounting.PlannerInputTokens, planner)
	}
}

// TestSliceCountsMatchWhatWasSent: a slice cut out of the context (here a
// line range) shares its memory and is counted from the context's index;
// its figures are still those of what the sub-agent was sent.
func TestSliceCountsMatchWhatWasSent(t *testing.T) {
	ctx := realContext(t, 64<<10)
	plan := `{"subtasks": [{"task": "Summarise it", "skill": "summarization", "context_pointers": {"line_ranges": [[3, 700]]}}], "reasoning": "r"}`
	s := llmtest.NewServer(t, script(llmtest.Text(plan)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Context, cfg.Window = ctx, 10_000_000
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	c := tokens.Default()
	sub, slice := 0, ""
	for _, r := range s.Requests() {
		if isPlanner(r) || isSynthesis(r) {
			continue
		}
		sub += c.Count(r.System)
		for _, m := range r.Messages {
			sub += c.Count(m.Content)
			slice = contextOf(r)
		}
	}
	st := rec.Subtasks[0]
	if st.Slice == nil || st.Slice.Fallback || len(slice) < 8<<10 {
		t.Fatalf("want a slice of the context of several KB, got %+v (%d bytes)", st.Slice, len(slice))
	}
	if st.PromptTokens != sub {
		t.Errorf("subtask prompt counted %d, sent %d", st.PromptTokens, sub)
	}
	if want := c.Count(slice); st.ContextTokens != want {
		t.Errorf("slice counted %d, its text %d", st.ContextTokens, want)
	}
}
