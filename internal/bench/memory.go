package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/tokens"
)

// memSampler records, while a run goes, the peak of the live heap (as the
// collector last measured it: /gc/heap/live) and of the heap in use
// (HeapInuse: live objects, garbage not yet collected and partly used
// spans), above their levels when it started, and the peak live heap in each
// phase the run reports.
type memSampler struct {
	baseLive, baseInuse uint64
	mu                  sync.Mutex
	peakLive, peakInuse uint64
	phase               string
	phases              map[string]uint64
	done                chan struct{}
	wg                  sync.WaitGroup
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func readHeap() (live, inuse uint64) {
	s := append([]metrics.Sample(nil), liveSample...)
	s = append(s, metrics.Sample{Name: "/memory/classes/heap/objects:bytes"}, metrics.Sample{Name: "/memory/classes/heap/unused:bytes"})
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64() + s[2].Value.Uint64()
}

func startMemSampler() *memSampler {
	runtime.GC()
	m := &memSampler{done: make(chan struct{}), phases: map[string]uint64{}, phase: "start"}
	m.baseLive, m.baseInuse = readHeap()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *memSampler) sample() {
	live, inuse := readHeap()
	m.mu.Lock()
	defer m.mu.Unlock()
	l, u := sub0(live, m.baseLive), sub0(inuse, m.baseInuse)
	m.peakLive, m.peakInuse = max(m.peakLive, l), max(m.peakInuse, u)
	m.phases[m.phase] = max(m.phases[m.phase], l)
}

func (m *memSampler) setPhase(p string) {
	m.mu.Lock()
	m.phase = p
	m.mu.Unlock()
}

// stop ends sampling; a last collection makes the live figure of the run's
// end count too.
func (m *memSampler) stop() (live, inuse uint64, phases map[string]uint64) {
	close(m.done)
	m.wg.Wait()
	runtime.GC()
	m.sample()
	return m.peakLive, m.peakInuse, m.phases
}

func sub0(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// memRun is one measured run.
type memRun struct {
	live, inuse uint64
	phases      map[string]uint64
	cpu, wall   time.Duration
	tokenized   int64 // bytes baton's counter tokenized
	fallbacks   int
}

// sampledAsk runs one ask with the heap sampled, the phase it is in noted
// from its progress events, and its CPU, wall time and bytes tokenized
// (read, which cfg.Counter meters) recorded.
func sampledAsk(ctx context.Context, read *atomic.Int64, cfg orchestrate.Config) (memRun, *orchestrate.Record, error) {
	m := startMemSampler()
	cfg.Progress = func(e orchestrate.Event) {
		if e.Index == -1 {
			m.setPhase(e.Phase)
		}
	}
	cpu0, t0 := processCPU(), time.Now()
	rec, err := orchestrate.Ask(ctx, cfg)
	r := memRun{cpu: processCPU() - cpu0, wall: time.Since(t0)}
	r.live, r.inuse, r.phases = m.stop()
	r.tokenized = read.Load()
	return r, rec, err
}

// dryRunMemory runs `ask --dry-run` over doc in this process.
func dryRunMemory(ctx context.Context, doc string) (memRun, error) {
	var read atomic.Int64
	counter := tokens.ForModel(ModelName).Metered(&read)
	counter.Count("load the vocabulary before the baseline")
	r, rec, err := sampledAsk(ctx, &read, orchestrate.Config{
		Task: "What is the zorblax quintrelle?", Context: doc, DryRun: true,
		ModelName: ModelName, Counter: counter,
	})
	if err != nil {
		return r, err
	}
	for _, s := range rec.Subtasks {
		if s.Slice != nil && s.Slice.Fallback {
			r.fallbacks++
		}
	}
	return r, nil
}

// fallbackPlan is a planner reply with n delegated subtasks whose pointers
// name nothing, so every one of them is sent the whole context.
func fallbackPlan(n int) string {
	p := plan.Plan{Reasoning: "memory benchmark"}
	for i := range n {
		p.Subtasks = append(p.Subtasks, plan.Subtask{
			Task: fmt.Sprintf("Report item %d.", i+1), Skill: "fact-extraction",
			ContextPointers: plan.Pointers{Sections: []string{fmt.Sprintf("Zzqx absent section %d", i+1)}},
		})
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// fallbackMemory runs n subtasks that all fall back to doc against the fake,
// k at a time. The fake forgets each request once it has it, so that what
// stays in memory is baton's.
func fallbackMemory(ctx context.Context, doc string, n, k int) (memRun, error) {
	// Short replies keep the synthesis prompt small, so that what the
	// counter reads is the context and the prompts around it.
	srv := llmtest.New(
		llmtest.Always(llmtest.Text(fallbackPlan(n))).WhenSystem(plannerMarker),
		llmtest.Always(llmtest.Text("All items reported.")).WhenSystem(synthesisMarker),
		llmtest.Always(llmtest.Text("Item reported.")),
	)
	defer srv.Close()
	srv.OnRequest(func(llmtest.RecordedRequest) { srv.Reset() })
	model, err := newModel(srv, llm.Limits{Concurrency: k})
	if err != nil {
		return memRun{}, err
	}
	var read atomic.Int64
	counter := tokens.ForModel(ModelName).Metered(&read)
	counter.Count("load the vocabulary before the baseline")
	r, rec, err := sampledAsk(ctx, &read, orchestrate.Config{
		Task: "Report every item.", Context: doc, Model: model, Provider: "anthropic", Planner: orchestrate.PlannerFull, MaxFallbackTokens: -1,
		ModelName: ModelName, Counter: counter, Concurrency: k, MaxSubtasks: n,
		// The whole context must fit, or no fallback is sent at all.
		Window: 10_000_000,
	})
	if err != nil {
		return r, err
	}
	for _, s := range rec.Subtasks {
		if s.Status != orchestrate.StatusOK {
			return r, fmt.Errorf("subtask %d: %s %s", s.Index+1, s.Status, s.Error)
		}
		if s.Slice != nil && s.Slice.Fallback {
			r.fallbacks++
		}
	}
	return r, nil
}

func mb(n uint64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func times(n uint64, of int) string { return fmt.Sprintf("%.2f×", float64(n)/float64(of)) }

// medianRun is the run with the median peak live heap, and the medians of
// the other figures.
func medianRuns(rs []memRun) memRun {
	med := func(f func(memRun) time.Duration) time.Duration {
		var ds []time.Duration
		for _, r := range rs {
			ds = append(ds, f(r))
		}
		return perfMedian(ds)
	}
	out := rs[0]
	out.live = uint64(med(func(r memRun) time.Duration { return time.Duration(r.live) }))
	out.inuse = uint64(med(func(r memRun) time.Duration { return time.Duration(r.inuse) }))
	out.cpu = med(func(r memRun) time.Duration { return r.cpu })
	out.wall = med(func(r memRun) time.Duration { return r.wall })
	out.tokenized = int64(med(func(r memRun) time.Duration { return time.Duration(r.tokenized) }))
	out.phases = map[string]uint64{}
	for p := range rs[0].phases {
		out.phases[p] = uint64(med(func(r memRun) time.Duration { return time.Duration(r.phases[p]) }))
	}
	return out
}

// RunMemory measures the two memory targets of issue 9: a dry run over a
// 10 MB document, and 500 subtasks that all fall back to a 1 MB context.
func RunMemory(ctx context.Context, tasks []*Task, opts Options) (Section, error) {
	// The fallback run is done once: it takes minutes, most of them the
	// fake's token count of each 1 MB request, for its usage.
	drySize, fbSize, fbN, k, reps, fbReps := 10<<20, 1<<20, 500, orchestrate.DefaultConcurrency, 3, 1
	if opts.Quick {
		drySize, fbSize, fbN, reps = 2<<20, 256<<10, 50, 1
	}
	sec := Section{
		Title: "Memory and counting that grow with the work",
		Intro: "Issue 9: a dry run over a 10 MB document peaks below 5× the document and tokenizes it once; 500 subtasks that all fall back to a 1 MB context peak below 500 MB. Both run in this process, heap sampled every millisecond with runtime/metrics, above the level before the run (the document itself and the tokenizer's vocabulary are in that level). *Peak live* is the largest live heap the collector measured; *peak in use* adds garbage not yet collected and partly used spans, so it is what the process asked the system for. Each figure is the median of the runs (three of the dry run; one of the fallbacks, which takes minutes, most of them the fake's token count of each 1 MB request).",
	}

	doc, _ := perfDoc(tasks, drySize)
	opts.logf("  memory: dry run over %.1f MB, %d runs", float64(len(doc))/1e6, reps)
	var drys []memRun
	for range reps {
		r, err := dryRunMemory(ctx, doc)
		if err != nil {
			return Section{}, fmt.Errorf("dry run: %w", err)
		}
		drys = append(drys, r)
	}
	dry := medianRuns(drys)
	dryTbl := Table{
		Title:  fmt.Sprintf("Dry run of `ask` over %.1f MB of markdown", float64(len(doc))/1e6),
		Header: []string{"peak live heap", "× document", "peak heap in use", "× document", "bytes tokenized ÷ document", "CPU", "CPU-s/MB", "wall"},
		Rows: [][]string{{mb(dry.live), times(dry.live, len(doc)), mb(dry.inuse), times(dry.inuse, len(doc)),
			fmt.Sprintf("%.3f", float64(dry.tokenized)/float64(len(doc))), perfMS(dry.cpu), fmt.Sprintf("%.3f", dry.cpu.Seconds()/(float64(len(doc))/1e6)), perfMS(dry.wall)}},
	}
	phaseRow := []string{}
	for _, p := range []string{"start", "plan", "assemble"} {
		if v, ok := dry.phases[p]; ok {
			phaseRow = append(phaseRow, fmt.Sprintf("%s %s", p, mb(v)))
		}
	}
	dryTbl.Notes = []string{"The task's words occur nowhere in the repeated corpus, in no heading and no passage, so the retrieval planner (a dry run calls no model) sends one subtask the whole context: the fallback is counted too. " +
		"*Bytes tokenized* is what baton's counter handed the tokenizer (tokens.Counter.Metered) over the document's size: between 1 and 2 means the document was read once, for the context figure, both baselines, the full planner's request and the fallback slice, the rest being the outline and the prompts around it; each further reading of the document adds 1 (it was 5 before the context was counted once). " +
		"Peak live heap by phase (start: counting and parsing; plan: the retrieval planner's index; assemble: slices and the estimate): " + joinOr(phaseRow, "none sampled") + "."}
	sec.Tables = append(sec.Tables, dryTbl)
	liveT := Target{Fail: failDryLive, Name: "dry run over a large document: peak live heap below 5× the document", Want: "< 5×", Got: times(dry.live, len(doc)), Met: dry.live < 5*uint64(len(doc))}
	if !liveT.Met {
		liveT.Why = "the live heap rose to " + times(dry.live, len(doc)) + " of the document; the phase figures above say where"
	}
	onceT := Target{Fail: failDryOnce, Name: "dry run tokenizes the document once", Want: "bytes tokenized < 2 × document", Got: fmt.Sprintf("%.3f×", float64(dry.tokenized)/float64(len(doc))), Met: dry.tokenized < 2*int64(len(doc))}
	if !onceT.Met {
		onceT.Why = "the counter read the document more than once"
	}
	if dry.fallbacks != 1 {
		onceT.Met, onceT.Why = false, fmt.Sprintf("the run had %d fallback subtasks, not the one the measure is built on", dry.fallbacks)
	}

	fb, _ := perfDoc(tasks, fbSize)
	opts.logf("  memory: %d subtasks falling back to %.1f MB, K = %d, %d runs", fbN, float64(len(fb))/1e6, k, fbReps)
	var fbs []memRun
	for range fbReps {
		r, err := fallbackMemory(ctx, fb, fbN, k)
		if err != nil {
			return Section{}, fmt.Errorf("%d fallbacks: %w", fbN, err)
		}
		fbs = append(fbs, r)
	}
	f := medianRuns(fbs)
	sec.Tables = append(sec.Tables, Table{
		Title:  fmt.Sprintf("%d subtasks that all fall back to a %.1f MB context, %d at a time, against the fake (%d run)", fbN, float64(len(fb))/1e6, k, fbReps),
		Header: []string{"peak live heap", "peak heap in use", "bytes tokenized ÷ context", "CPU", "wall"},
		Rows:   [][]string{{mb(f.live), mb(f.inuse), fmt.Sprintf("%.3f", float64(f.tokenized)/float64(len(fb))), perfMS(f.cpu), perfMS(f.wall)}},
		Notes: []string{"Every pointer names nothing, so each sub-agent is sent the whole context; the full LLM planner reads it once too. The fake runs in this process, answers in a few words and forgets each request once it has it; its own parsing of the requests in flight (and its token count of each, for usage, which is most of the CPU) is included. " +
			"*Bytes tokenized* is baton's counter only: between 1 and 2 means the context was counted once for all the fallbacks, the baselines and the planner's request (the rest is the outline and the prompts around it); counting each fallback's prompt whole would make it about the number of subtasks."},
	})
	fbT := Target{Fail: failFallbackHeap, Name: fmt.Sprintf("%d fallbacks to a 1 MB context: peak heap in use below 500 MB", fbN), Want: "< 500 MB", Got: mb(f.inuse), Met: f.inuse < 500e6}
	if opts.Quick {
		fbT.Name = fmt.Sprintf("%d fallbacks to a %.2f MB context (quick run): peak heap in use below 500 MB", fbN, float64(len(fb))/1e6)
	}
	if !fbT.Met {
		fbT.Why = "requests are built ahead of the concurrency that sends them, or copies of the context are held per subtask"
	}
	fbOnce := Target{Fail: failFallbackOnce, Name: "the fallback context is counted once, not once per subtask", Want: "bytes tokenized < 2 × context", Got: fmt.Sprintf("%.3f×", float64(f.tokenized)/float64(len(fb))), Met: f.tokenized < 2*int64(len(fb))}
	if !fbOnce.Met {
		fbOnce.Why = "the counter read the context more than once"
	}
	if f.fallbacks != fbN {
		fbT.Met, fbT.Why = false, fmt.Sprintf("only %d of %d subtasks fell back", f.fallbacks, fbN)
		fbOnce.Met = false
	}
	sec.Targets = []Target{liveT, onceT, fbT, fbOnce}
	sec.Notes = []string{"How each could fail: " + failDryLive + "; " + failDryOnce + "; " + failFallbackHeap + "; " + failFallbackOnce + "."}
	return sec, nil
}

// How each memory target could fail: what a run would measure for it to be
// missed.
const (
	failDryLive      = "the dry run's heap fails when a copy of the document is held per heading (the retrieval planner's section texts), per prompt (the planner's request, a fallback's message) or in an index larger than the text"
	failDryOnce      = "the dry run's counting fails when a prompt that holds the document (a baseline, the planner's request, the fallback) is tokenized whole instead of as its wrapping plus the document's count: each adds 1 to the ratio, as five readings did before"
	failFallbackHeap = "the fallbacks' heap fails when requests are built ahead of the concurrency that sends them (500 copies of 1 MB) or a copy of the context is held per subtask"
	failFallbackOnce = "the fallbacks' counting fails when each fallback's prompt is counted whole: the ratio then grows with the number of subtasks"
)

func joinOr(parts []string, none string) string {
	if len(parts) == 0 {
		return none
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += ", " + p
	}
	return out
}

func perfMS(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// runPerf runs the sections of memory.go and slicespeed.go that opts
// selects.
func (r *Report) runPerf(ctx context.Context, tasks []*Task, opts Options) error {
	if opts.want("memory") {
		opts.logf("memory")
		s, err := RunMemory(ctx, tasks, opts)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("assembler") {
		opts.logf("assembler speed")
		s, err := RunSliceSpeed(ctx, tasks, opts)
		if err != nil {
			return fmt.Errorf("assembler speed: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	return nil
}
