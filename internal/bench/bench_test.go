package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

func TestCorpus(t *testing.T) {
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 10 {
		t.Fatalf("%d documents, want at least 10", len(tasks))
	}
	sources, err := os.ReadFile("testdata/corpus/SOURCES.md")
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.ForModel(ModelName)
	for _, task := range tasks {
		if n := c.Count(task.Text); n < 5000 || n > 200000 {
			t.Errorf("%s: %d tokens, want 5k to 200k", task.ID, n)
		}
		if n := len(task.Parsed.Subtasks); n < 3 || n > 6 {
			t.Errorf("%s: %d subtasks, want 3 to 6", task.ID, n)
		}
		if !strings.Contains(string(sources), "| "+task.File+" |") {
			t.Errorf("%s: SOURCES.md does not name %s", task.ID, task.File)
		}
	}
}

func TestSeedSpans(t *testing.T) {
	d := slice.Parse([]byte("# Top\n\n## Retries\nr\n### Detail\nd\n## `Code` Title\nc\n## Other\no\n"))
	tests := []struct {
		ptr      string
		want     [][2]int
		fallback bool
	}{
		{"retries", [][2]int{{3, 6}}, false},
		{"  RETRIES ", [][2]int{{3, 6}}, false},
		{"## Retries", nil, true}, // the seed compares text, markers and all
		{"Code Title", nil, true}, // markup is part of the seed's header text
		{"`code` title", [][2]int{{7, 8}}, false},
		{"Retries:", nil, true},
		{"Top > Retries", nil, true},
	}
	for _, tt := range tests {
		got, fb := SeedSpans(d, []string{tt.ptr})
		if fb != tt.fallback || len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("SeedSpans(%q) = %v, %v; want %v, %v", tt.ptr, got, fb, tt.want, tt.fallback)
		}
	}
}

func TestOneTypo(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Retries", "Retires", true},
		{"Flag Groups", "Flag Gropus", true},
		{"A to B", "", false},
		{"Tools", "Tolos", true},
	}
	for _, tt := range tests {
		got, ok := oneTypo(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("oneTypo(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEfficiencyOrdering runs one small corpus task through every variant
// and checks the relations every run must keep, not timings.
func TestEfficiencyOrdering(t *testing.T) {
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var small *Task
	for _, task := range tasks {
		if task.ID == "otel-go-contributing" {
			small = task
		}
	}
	es, err := RunEfficiency(context.Background(), []*Task{small})
	if err != nil {
		t.Fatal(err)
	}
	e := es[0]
	if !(e.Lower <= e.Baton && e.Baton <= e.Seed && e.Seed <= e.Naive) {
		t.Errorf("want lower ≤ baton ≤ seed ≤ naive, got %d, %d, %d, %d", e.Lower, e.Baton, e.Seed, e.Naive)
	}
	if e.Single <= e.Context || !e.SingleFits {
		t.Errorf("single call %d (fits %v) for a %d-token context", e.Single, e.SingleFits, e.Context)
	}
	if e.BatonFallbacks != 0 {
		t.Errorf("baton fell back %d times", e.BatonFallbacks)
	}
	for _, v := range []string{VariantBaton, VariantLower} {
		if s := e.Evidence[v]; s.Sentences == 0 || s.InSlice != s.Sentences || s.AnswerHeld != s.Answer {
			t.Errorf("%s: evidence %+v, want every sentence in its slice and in the answer", v, s)
		}
	}
	for _, v := range []string{VariantBaton, VariantSeed, VariantLower} {
		rec := e.Records[v]
		// The fake counts with another tokenizer, so the two differ, but
		// not wildly.
		got, counted := float64(rec.Usage.Total.PromptTokens()), float64(rec.Accounting.OrchestratedInputTokens)
		if got == counted || got < 0.7*counted || got > 1.3*counted {
			t.Errorf("%s: the fake reported %.0f input tokens, the accounting counted %.0f", v, got, counted)
		}
	}
	// The outline runs light up when orchestrate has the outline planner;
	// until then the report says its targets were not run, and misses them.
	if OutlineAvailable() {
		if e.Records[VariantOutline] == nil || e.Outline == 0 || e.Evidence[VariantOutline].InSlice != e.Evidence[VariantOutline].Sentences {
			t.Errorf("outline run: %d tokens, evidence %+v", e.Outline, e.Evidence[VariantOutline])
		}
		if got := e.Records[VariantOutline].Planner; got != PlannerOutline {
			t.Errorf("outline run planned by %q", got)
		}
		// A 5k-token document: the default answers in one direct call,
		// the single call itself.
		if e.AutoPlanner != orchestrate.PlannerDirect || e.Auto != e.Single {
			t.Errorf("auto ran %q and sent %d, the single call %d", e.AutoPlanner, e.Auto, e.Single)
		}
	}
	s := EfficiencySection(es)
	outlineTargets := 0
	for _, tg := range s.Targets {
		if tg.Fail == "" {
			t.Errorf("target %q does not say how it could have failed", tg.Name)
		}
		if strings.HasPrefix(tg.Name, "outline planner") {
			outlineTargets++
			if !OutlineAvailable() && (tg.Met || tg.Got != "not run") {
				t.Errorf("target %q: %q, met %v, without an outline planner", tg.Name, tg.Got, tg.Met)
			}
		}
	}
	if outlineTargets < 2 {
		t.Errorf("%d outline targets, want the two of the issue's acceptance", outlineTargets)
	}
	var b strings.Builder
	s.Markdown(&b)
	for _, want := range []string{"otel-go-contributing", "single call", "how it could have failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the section lacks %q:\n%s", want, b.String())
		}
	}
	c := CostSection(es)
	if len(c.Tables) != 1 || len(c.Tables[0].Rows) != 2 {
		t.Errorf("cost table: %+v", c.Tables)
	}
}

func TestPointerVariants(t *testing.T) {
	h := citedHeading{h: slice.Heading{Title: "3. Retry Policy", Path: []string{"Guide"}}, ord: 3}
	got := map[string]string{}
	for _, v := range pointerVariants(h) {
		got[v.kind] = v.ptr
	}
	want := map[string]string{
		"exact": "3. Retry Policy", "other case": "3. retry policy", "numbering added/removed": "Retry Policy",
		"emphasis": "**3. Retry Policy**", "code span": "`3. Retry Policy`", "trailing colon": "3. Retry Policy:",
		"parent path": "Guide > 3. Retry Policy", "one typo": "3. Retry Polciy",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
}

// The initial burst is free capacity, not throughput: a run that fits in it
// has no sustained rate, and a run of twice the limit paced as the sliding
// window allows sustains the limit, not twice it.
func TestSustainedRateExcludesBurst(t *testing.T) {
	if got := sustainedRate(19000, 20000, 200*time.Millisecond); got != 0 {
		t.Errorf("a run inside the burst: %.0f tok/min, want 0", got)
	}
	if got := sustainedRate(40000, 20000, time.Minute); got != 20000 {
		t.Errorf("twice the limit over one minute: %.0f tok/min, want 20000", got)
	}
	if got := sustainedRate(40000, 20000, 2*time.Minute); got != 10000 {
		t.Errorf("a client that waited twice as long: %.0f tok/min, want 10000", got)
	}
}

func TestMedianRun(t *testing.T) {
	r, spread, err := medianRun(context.Background(), "", 4, 2, 5*time.Millisecond, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	// The plain client made the same four calls, two at a time: at least
	// two rounds of the fake's latency.
	if r.Plain < 2*5*time.Millisecond {
		t.Errorf("plain client's dispatch %v, want at least two rounds of 5ms", r.Plain)
	}
	if r.Failed != 0 || r.Dispatch <= 0 || r.Whole < r.Dispatch {
		t.Errorf("median run %+v", r)
	}
	if q := float64(r.Dispatch) / float64(r.Ideal); !(spread[0] <= q && q <= spread[1] && spread[0] >= 1) {
		t.Errorf("spread %v", spread)
	}
}

func TestRealWordVariant(t *testing.T) {
	d := slice.Parse([]byte("# Guide\n\n## Hosting\nh\n## Create\nc\n## Nesting\nn\n"))
	vocab := map[string]bool{"posting": true, "created": true, "nesting": true, "testing": true}
	tests := []struct {
		title, want string
		ok          bool
	}{
		{"Hosting", "Posting", true},
		{"Create", "", false},  // "Created" is the same word inflected
		{"Testing", "", false}, // "Nesting" is a heading of the document: matching it is right
		{"Tool", "", false},    // nothing in the vocabulary is one edit away
	}
	for _, tt := range tests {
		got, ok := realWordVariant(tt.title, vocab, d)
		if ok != tt.ok || got != tt.want {
			t.Errorf("realWordVariant(%q) = %q, %v; want %q, %v", tt.title, got, ok, tt.want, tt.ok)
		}
	}
}

// A pointer that falls back hands over the whole document, which holds the
// section, but that is not recall: it is counted as a fallback alone.
func TestPointerFallbackIsNotRecall(t *testing.T) {
	task := corpusTask(t, "cobra-user-guide")
	h, err := FindHeading(task.Doc, task.Intended[0][0])
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.ForModel(ModelName)
	o := pointerOutcome(task, c, c.Count(task.Text), "baton", "Quarterly Revenue Forecast", &h, 1)
	if o.Fallback != 1 || o.Recall != 0 || o.Wrong != 0 {
		t.Errorf("outcome %+v, want a fallback without recall", o)
	}
	o = pointerOutcome(task, c, c.Count(task.Text), "baton", h.Title, &h, 1)
	if o.Fallback != 0 || o.Recall != 1 {
		t.Errorf("exact title: outcome %+v, want recall", o)
	}
}

// The default planner on a corpus document over 20k tokens sends less than
// the single call: the otel changelog (it sent 1.30 times as much while
// auto ran the full planner up to half the window), and gopls's analyzers,
// whose 251 headings side by side are over a fifth of the single call even
// at the top level (auto answered it directly until the outline could take
// more).
func TestAutoBelowTheSingleCallOnALargeDocument(t *testing.T) {
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var large []*Task
	for _, task := range tasks {
		if task.ID == "otel-go-changelog" || task.ID == "gopls-analyzers" {
			large = append(large, task)
		}
	}
	es, err := RunEfficiency(context.Background(), large)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 {
		t.Fatalf("%d documents run", len(es))
	}
	for _, e := range es {
		if e.Context <= OutlineGate || e.Auto == 0 || e.Auto >= e.Single || e.AutoPlanner != PlannerOutline {
			t.Errorf("%s: auto (%s) sent %d for a %d-token document, the single call %d", e.ID, e.AutoPlanner, e.Auto, e.Context, e.Single)
		}
		rec := e.Records[VariantAuto]
		if rec.Status != orchestrate.RunOK || rec.Accounting.Fallbacks != 0 {
			t.Errorf("%s: status %q, %d fallbacks; reason %s", e.ID, rec.Status, rec.Accounting.Fallbacks, rec.PlannerReason)
		}
	}
}
