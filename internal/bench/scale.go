package bench

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// The scale benchmark is the "10× the window" run: a corpus of many
// real documents totalling at least ten times the planner's window, asked a
// question whose answer depends on every part of it (a count of marks
// planted across the corpus). auto must plan from the outline, the count
// must run map-reduce over parts that each fit, and the fake, which refuses
// every request over its window as the providers do and answers only from
// what it was sent, makes a part left out (or sent twice) show as a wrong
// total. Then dry runs at a quarter, a half and the whole of the corpus show
// how baton's own work (combining, outlining, slicing, counting) grows.

// ScaleWindow is the planner's and sub-agents' window in the scale run: the
// 200k of today's large models; --quick uses a tenth of it.
const ScaleWindow = 200_000

// scaleMark is planted across the corpus; its count is the task's answer.
const scaleMark = "BENCH-TALLY-MARK"

var scaleCountLine = regexp.MustCompile(`count: (\d+)`)

func sumScaleCounts(s string) int {
	n := 0
	for _, m := range scaleCountLine.FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// scaleCorpus repeats the corpus documents under distinct names until they
// total at least want tokens, planting the mark on a known number of
// paragraph ends in each copy. It returns the documents, the marks planted
// and the total tokens (each document counted once).
func scaleCorpus(tasks []*Task, want int, c *tokens.Counter) (docs []slice.NamedDoc, planted, total int) {
	sizes := make([]int, len(tasks))
	for i, t := range tasks {
		sizes[i] = c.Count(t.Text)
	}
	for copyN := 0; total < want; copyN++ {
		for i, t := range tasks {
			if total >= want {
				break
			}
			var b strings.Builder
			b.Grow(len(t.Text) + 1024)
			para := 0
			for line := range strings.Lines(t.Text) {
				b.WriteString(line)
				// After every 17th blank line (a paragraph end outside a
				// fence is most of them), plant one mark in its own
				// paragraph, so it never splits a construct.
				if strings.TrimSpace(line) == "" {
					para++
					if (para+copyN+i)%17 == 0 {
						b.WriteString("Audit note: " + scaleMark + " recorded here.\n\n")
						planted++
					}
				}
			}
			docs = append(docs, slice.NamedDoc{Name: fmt.Sprintf("copy-%02d/%s", copyN+1, t.File), Data: []byte(b.String())})
			total += sizes[i]
		}
	}
	return docs, planted, total
}

// newScaleFake answers from what each request holds: the planner's one
// subtask with scope all, a map part's count of the mark in its context, a
// reduce request's sum of the counts it was given, the synthesis's sum.
func newScaleFake(window int) *llmtest.Server {
	plan := `{"subtasks": [{"task": "Count the ` + scaleMark + ` marks", "skill": "fact-extraction", "scope": "all", "context_pointers": {"sections": [], "line_ranges": []}, "answer": ""}], "reasoning": "a count needs every part of the corpus"}`
	s := llmtest.New(llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		last := userText(r)
		switch {
		case strings.Contains(r.System, plannerMarker):
			return llmtest.Text(plan)
		case strings.Contains(r.System, synthesisMarker):
			_, results, _ := strings.Cut(last, "Subtask results")
			return llmtest.Text(fmt.Sprintf("The corpus holds count: %d marks.", sumScaleCounts(results)))
		case strings.Contains(r.System, "You are the reduce step"):
			_, partials, _ := strings.Cut(last, "Partial answers")
			return llmtest.Text(fmt.Sprintf("count: %d", sumScaleCounts(partials)))
		}
		ctx, _ := splitSubagentPrompt(last)
		return llmtest.Text(fmt.Sprintf("count: %d", strings.Count(ctx, scaleMark)))
	}))
	s.SetContextWindow(window)
	return s
}

// ScaleResult is what the scale run measured.
type ScaleResult struct {
	Window, Documents, CorpusTokens, Planted int
	Record                                   *orchestrate.Record
	Requests, OverWindow                     int
	LargestRequest                           int // prompt + max_tokens, as the fake counted it
	Growth                                   []ScalePoint
}

// ScalePoint is one dry run of the growth series.
type ScalePoint struct {
	Share     string // "1/4", "1/2", "1"
	Bytes     int
	CPUPerMB  time.Duration // median over the repetitions
	WallPerMB time.Duration
}

// RunScale runs the scale benchmark.
func RunScale(ctx context.Context, tasks []*Task, opts Options) (Section, error) {
	window, reps := ScaleWindow, 3
	if opts.Quick {
		window, reps = ScaleWindow/10, 1
	}
	c := counterFor()
	docs, planted, total := scaleCorpus(tasks, 10*window+window/10, c)
	combined, _ := slice.Combine(docs)
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name
	}
	res := ScaleResult{Window: window, Documents: len(docs), CorpusTokens: total, Planted: planted}
	opts.logf("scale: %d documents, %d tokens, window %d", len(docs), total, window)

	srv := newScaleFake(window)
	defer srv.Close()
	task := "How many times does " + scaleMark + " appear across the corpus?"
	rec, err := ask(ctx, srv.AnthropicBaseURL(), baton.AskRequest{
		Task: task, Context: &document.Context{Text: string(combined), Sources: sources(names)},
		Window: window, Concurrency: 4,
	}, baton.Events{})
	res.Record = rec
	if err != nil {
		return Section{}, fmt.Errorf("scale run: %w", err)
	}
	for _, r := range srv.Requests() {
		res.Requests++
		if r.Status == 400 {
			res.OverWindow++
		}
		n := c.Count(r.System)
		for _, msg := range r.Messages {
			n += c.Count(msg.PromptText())
		}
		res.LargestRequest = max(res.LargestRequest, n+r.MaxTokens)
	}

	for _, share := range []struct {
		name string
		div  int
	}{{"1/4", 4}, {"1/2", 2}, {"1", 1}} {
		part := prefixOfBytes(docs, len(combined)/share.div)
		text, _ := slice.Combine(part)
		pn := make([]string, len(part))
		for i, d := range part {
			pn[i] = d.Name
		}
		var cpus, walls []time.Duration
		for range reps {
			cpu0, t0 := processCPU(), time.Now()
			if _, err := orchestrate.Ask(ctx, orchestrate.Config{Task: task, Context: string(text), Sources: pn,
				ModelName: ModelName, Window: window, DryRun: true}); err != nil {
				return Section{}, fmt.Errorf("scale dry run at %s: %w", share.name, err)
			}
			cpus, walls = append(cpus, processCPU()-cpu0), append(walls, time.Since(t0))
		}
		mb := float64(len(text)) / (1 << 20)
		res.Growth = append(res.Growth, ScalePoint{Share: share.name, Bytes: len(text),
			CPUPerMB: time.Duration(float64(medianDuration(cpus)) / mb), WallPerMB: time.Duration(float64(medianDuration(walls)) / mb)})
	}
	return ScaleSection(res, reps), nil
}

// prefixOfBytes is the shortest run of leading documents holding at least
// n bytes, so that the growth series compares sizes, not document counts.
func prefixOfBytes(docs []slice.NamedDoc, n int) []slice.NamedDoc {
	sum := 0
	for i, d := range docs {
		sum += len(d.Data)
		if sum >= n {
			return docs[:i+1]
		}
	}
	return docs
}

func medianDuration(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// ScaleGrowthLimit is how much more CPU per MB the whole corpus may cost
// than a quarter of it for the growth to count as linear.
const ScaleGrowthLimit = 1.5

// ScaleSection reports a scale run.
func ScaleSection(r ScaleResult, reps int) Section {
	rec, a := r.Record, r.Record.Accounting
	want := fmt.Sprintf("count: %d", r.Planted)
	correct := strings.Contains(rec.Answer, want)
	single := "fits"
	if a.SingleCallFits != nil && !*a.SingleCallFits {
		single = "does not fit"
	}
	run := Table{
		Title:  "The run",
		Header: []string{"documents", "corpus tokens", "window", "planner", "map calls", "reduce calls", "requests", "over the window", "largest request", "input tokens", "single call", "naive", "answer"},
		Rows: [][]string{{
			strconv.Itoa(r.Documents), strconv.Itoa(r.CorpusTokens), strconv.Itoa(r.Window), rec.Planner,
			strconv.Itoa(a.MapCalls), strconv.Itoa(a.ReduceCalls), strconv.Itoa(r.Requests), strconv.Itoa(r.OverWindow),
			strconv.Itoa(r.LargestRequest), strconv.Itoa(a.OrchestratedInputTokens),
			fmt.Sprintf("%d (%s)", a.SingleCallInputTokens, single), strconv.Itoa(a.NaiveInputTokens),
			fmt.Sprintf("%q", rec.Answer),
		}},
		Notes: []string{
			fmt.Sprintf("The planted answer is %d marks. The fake counts each map part's marks in the context it was sent, adds the counts a reduce request was given, and refuses (400, the provider's own body) any request whose prompt and max_tokens exceed %d tokens; \"largest request\" is its own count of the biggest one.", r.Planted, r.Window),
			fmt.Sprintf("Planner: %s", rec.PlannerReason),
		},
	}
	growth := Table{
		Title:  "Growth of baton's own work (dry runs: combine, outline, plan, slice, count)",
		Header: []string{"share of the corpus", "MB", "CPU s/MB", "wall s/MB"},
		Notes:  []string{fmt.Sprintf("Median of %d dry runs at each size; CPU is this process's user and system time.", reps)},
	}
	for _, p := range r.Growth {
		growth.Rows = append(growth.Rows, []string{p.Share, fmt.Sprintf("%.1f", float64(p.Bytes)/(1<<20)),
			fmt.Sprintf("%.3f", p.CPUPerMB.Seconds()), fmt.Sprintf("%.3f", p.WallPerMB.Seconds())})
	}
	var ratio float64
	if n := len(r.Growth); n > 1 && r.Growth[0].CPUPerMB > 0 {
		ratio = float64(r.Growth[n-1].CPUPerMB) / float64(r.Growth[0].CPUPerMB)
	}
	targets := []Target{
		{Name: "a corpus at least 10× the window", Want: fmt.Sprintf("≥ %d tokens", 10*r.Window), Got: strconv.Itoa(r.CorpusTokens), Met: r.CorpusTokens >= 10*r.Window,
			Fail: "a corpus too small would make the run prove nothing; it is measured, not assumed"},
		{Name: "status ok with the outline planner", Want: "ok, outline", Got: rec.Status + ", " + rec.Planner, Met: rec.Status == orchestrate.RunOK && rec.Planner == orchestrate.PlannerOutline,
			Fail: "an outline over its budget makes auto fall back to retrieval; a failed part makes the run partial"},
		{Name: "no request over its window", Want: "0 refused, largest ≤ window", Got: fmt.Sprintf("%d refused, largest %d", r.OverWindow, r.LargestRequest), Met: r.OverWindow == 0 && r.LargestRequest <= r.Window,
			Fail: "the fake refuses and logs every request over the window, counted with its own count of what it received"},
		{Name: "map-reduce answer", Want: want, Got: fmt.Sprintf("%q", rec.Answer), Met: correct && a.MapCalls > 1 && a.ReduceCalls > 0,
			Fail: "the fake answers only from what it was sent: a part left out or sent twice changes the total"},
		{Name: "linear growth", Want: fmt.Sprintf("CPU/MB at the whole ≤ %.1f× at a quarter", ScaleGrowthLimit), Got: fmt.Sprintf("%.2f×", ratio), Met: ratio > 0 && ratio <= ScaleGrowthLimit,
			Why:  "counting or slicing grows faster than the text",
			Fail: "work that grows faster than the text (a quadratic scan, a recount per subtask) shows as CPU per MB rising with size"},
	}
	return Section{
		Title:   "Scale: ten times the window",
		Intro:   "The corpus documents repeated under distinct names to more than ten times the window, with a mark planted across them; the task counts the marks, so its answer depends on every part. Everything after the planner's scripted reply is baton's real path: the outline planner chosen by auto, map-reduce over parts that fit, synthesis, through the Anthropic SDK to the fake.",
		Tables:  []Table{run, growth},
		Targets: targets,
	}
}
