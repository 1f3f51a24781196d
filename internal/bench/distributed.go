package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/engine/docstore"
	"github.com/baton-dev/baton/internal/pgserver"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
)

// The distributed fan-out: one ask whose delegated sub-agent calls go
// through the dbos engine to 1, 2 and 4 `baton worker` processes, each
// taking distConcurrency items at once, against the same ask in one
// process (--engine local) at the same total concurrency.
var distWorkers = []int{1, 2, 4}

const (
	distConcurrency = 8
	distLatency     = 500 * time.Millisecond
	// distTarget is the share of the ideal the largest worker count must
	// reach.
	distTarget = 0.80
)

// DistRun is one distributed ask.
type DistRun struct {
	Workers, N, K int
	Whole         time.Duration // the whole ask: planner, dispatch, synthesis
	Dispatch      time.Duration // assembler start to synthesis start
	Failed        int
	// Calls is how many sub-agent calls each worker answered, in the
	// order the workers were started: that the work was shared is shown
	// by who did it, not by how fast it went on a machine that may be busy.
	Calls []int
}

// RunDistributed measures the fan-out through baton worker processes. It
// needs PostgreSQL and a baton binary (opts.Baton); without either the
// section says it was skipped and why, and bench goes on.
func RunDistributed(ctx context.Context, opts Options) (Section, error) {
	n, reps := 200, FanoutReps
	if opts.Quick {
		n, reps = 64, 1
	}
	s := Section{
		Title: "Distributed fan-out: the dbos engine and baton worker processes",
		Intro: fmt.Sprintf("One ask with N = %d delegated subtasks whose sub-agent calls are enqueued on the dbos engine's queue in PostgreSQL and run by 1, 2 and 4 `baton worker` processes "+
			"(--concurrency %d each), the fake holding every reply back by L = %s; against the same ask in one process (--engine local) at the same total concurrency.", n, distConcurrency, distLatency),
	}
	skip := func(why string) (Section, error) {
		s.Notes = append(s.Notes, "**SKIPPED**: "+why+". The other benchmarks do not need PostgreSQL.")
		opts.logf("  distributed fan-out SKIPPED: %s", why)
		return s, nil
	}
	if opts.Baton == "" {
		return skip("no baton binary to start `baton worker` processes from (run it as `baton bench`)")
	}
	bin, err := pgserver.Find()
	if err != nil {
		return skip(fmt.Sprintf("no PostgreSQL: %v", err))
	}
	srv, err := pgserver.Launch(bin)
	if err != nil {
		return skip(fmt.Sprintf("PostgreSQL did not start: %s", firstLine(err.Error())))
	}
	defer srv.Stop()
	opts.logf("  PostgreSQL ready in %v", srv.StartTime.Round(time.Millisecond))

	fake := newDistFake()
	defer fake.srv.Close()
	fake.srv.SetLatency(distLatency)
	version := fmt.Sprintf("bench-%d-%d", os.Getpid(), time.Now().UnixNano())

	tb := Table{
		Title: fmt.Sprintf("Fan-out through worker processes, N = %d, --concurrency %d per worker, L = %s, %s", n, distConcurrency, distLatency, runsPhrase(reps)),
		Header: []string{"workers", "total concurrency", "ideal ⌈N/(W·K)⌉·L + 2L", "wall (dbos)", "efficiency ideal/wall", "lowest–highest", "items/s",
			"wall (local, same concurrency)", "engine's added time", "per item (÷ rounds)", "failed", "calls per worker, fewest–most"},
	}
	var best float64
	negative := false
	var last DistRun
	for _, w := range distWorkers {
		runs, locals, err := distPoint(ctx, opts, srv, fake, version, w, n, reps)
		if err != nil {
			return s, fmt.Errorf("%d workers: %w", w, err)
		}
		localWhole := medianOf(locals)
		k := w * distConcurrency
		rounds := int(math.Ceil(float64(n) / float64(k)))
		ideal := time.Duration(rounds)*distLatency + 2*distLatency
		wholes := make([]time.Duration, len(runs))
		failed, fewest, most := 0, n, 0
		for i, r := range runs {
			wholes[i] = r.Whole
			failed = max(failed, r.Failed)
			fewest, most = min(fewest, slices.Min(r.Calls)), max(most, slices.Max(r.Calls))
		}
		slices.Sort(wholes)
		med := wholes[len(wholes)/2]
		eff := float64(ideal) / float64(med)
		added := med - localWhole
		tb.Rows = append(tb.Rows, []string{itoa(w), itoa(k), ms(ideal), ms(med), fmt.Sprintf("%.3f", eff),
			fmt.Sprintf("%.3f–%.3f", float64(ideal)/float64(wholes[len(wholes)-1]), float64(ideal)/float64(wholes[0])),
			fmt.Sprintf("%.1f", float64(n)/med.Seconds()), ms(localWhole), ms(added),
			fmt.Sprintf("%.0f ms", float64(added)/float64(rounds)/1e6), itoa(failed), fmt.Sprintf("%d–%d", fewest, most)})
		best = eff
		if added < 0 {
			negative = true
		}
		last = DistRun{Workers: w, Failed: failed}
	}
	tb.Notes = []string{fmt.Sprintf("Each point is run %d times (once with --quick) and the median wall time is shown; *lowest–highest* is the efficiency of the slowest and fastest run. ", FanoutReps) +
		"*wall* is the whole ask, from the planner call to the synthesis answer, in the coordinating process (an in-process `orchestrate.Ask` with the dbos engine, enqueue only); " +
		"the workers are `baton worker` processes of this binary, started and ready before the clock starts, taking calls from the queue over PostgreSQL on a unix socket. " +
		"The ideal is the rounds of W·K calls at L each, plus the planner and synthesis calls (L each). " +
		"*engine's added time* is the median dbos wall minus the median local wall at the same concurrency (the same ask and fake in one process, run right after each dbos run so that both meet the machine under the same load); " +
		"*per item* divides it by the rounds, since the calls of a round wait in parallel: it is what the engine adds to each call's latency " +
		"(the workers' queue polling, the coordinator polling each item's record, and the database round trips of enqueueing, starting, recording the step and the result). " +
		"Every process shares this machine's cores with PostgreSQL and the in-process fake."}
	s.Tables = []Table{tb}
	if negative {
		s.Notes = append(s.Notes, "A negative added time is a local run slower than the dbos run beside it: other work on this shared machine took the cores during the local runs (see the spread of the runs); the engine's cost is the positive rows.")
	}
	s.Targets = []Target{{
		Name: fmt.Sprintf("%d workers reach at least %.2f of the ideal (N = %d, L = %s, %s)", last.Workers, distTarget, n, distLatency, runsPhrase(reps)),
		Want: fmt.Sprintf("≥ %.2f, no failed item", distTarget),
		Got:  fmt.Sprintf("%.3f, %d failed", best, last.Failed),
		Met:  best >= distTarget && last.Failed == 0,
		Why: "the engine's time per item (polling the queue and each item's record, the database round trips) or this machine's cores, shared by every worker, PostgreSQL and the fake, " +
			"added more than the target allows to each round of calls: see the per-item column",
		Fail: "a queue that hands work out late (polling), a coordinator that collects results late, workers that run fewer calls at once than --concurrency, or any failed item",
	}}
	return s, nil
}

// distPoint starts w workers on a fresh database and runs the ask reps
// times through them.
//
// After each run it runs the same ask in this process at the same
// concurrency (the local engine), so that the two see the machine under
// the same load; locals are those runs' wall times.
func distPoint(ctx context.Context, opts Options, srv *pgserver.Server, fake *distFake, version string, w, n, reps int) (runs []DistRun, locals []time.Duration, err error) {
	url := srv.URL(fmt.Sprintf("bench_dist_w%d", w))
	if err := dbosengine.Migrate(ctx, url); err != nil {
		return nil, nil, err
	}
	var procs []*workerProc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for i := range w {
		p, err := startWorker(opts.Baton, url, fmt.Sprintf("bench-w%d-%d", w, i+1), version, fake.srv.AnthropicBaseURL())
		if err != nil {
			return nil, nil, err
		}
		procs = append(procs, p)
	}
	for _, p := range procs {
		if err := p.ready(60 * time.Second); err != nil {
			return nil, nil, err
		}
	}
	k := w * distConcurrency
	m, err := newModel(fake.srv, llm.Limits{Concurrency: k})
	if err != nil {
		return nil, nil, err
	}
	docs, err := docstore.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	defer docs.Close()
	eng, err := dbosengine.Open(ctx, dbosengine.Config{DatabaseURL: url, AppVersion: version, ExecutorID: fmt.Sprintf("bench-coordinator-%d", w), EnqueueOnly: true},
		orchestrate.Tasks(m, docs))
	if err != nil {
		return nil, nil, err
	}
	defer eng.Close()
	const parts = 20
	doc := fanoutDoc(parts)
	for rep := range reps {
		opts.logf("  distributed fan-out N=%d through %d workers, run %d of %d", n, w, rep+1, reps)
		// A new plan each run: the items are named by their requests, so
		// the same requests again would be answered from the records.
		fake.plan.Store(distPlan(n, parts, fmt.Sprintf("w%d-r%d", w, rep)))
		fake.resetCalls()
		var clock dispatchClock
		start := time.Now()
		rec, err := orchestrate.Ask(ctx, orchestrate.Config{
			Task: "Extract the facts of every part.", Context: doc, Model: m, Planner: orchestrate.PlannerFull,
			Provider: "anthropic", ModelName: ModelName, Concurrency: k, MaxSubtasks: n,
			Engine: eng, Documents: docs,
			Progress: clock.observe,
		})
		r := DistRun{Workers: w, N: n, K: k, Whole: time.Since(start)}
		if err != nil {
			return nil, nil, fmt.Errorf("ask: %w%s", err, workersLog(procs))
		}
		if len(rec.Subtasks) != n {
			return nil, nil, fmt.Errorf("ask: %d subtasks, want %d", len(rec.Subtasks), n)
		}
		for _, st := range rec.Subtasks {
			if st.Status != orchestrate.StatusOK {
				r.Failed++
			}
		}
		r.Dispatch = clock.dispatch()
		for _, p := range procs {
			r.Calls = append(r.Calls, fake.callsBy(p.id))
		}
		runs = append(runs, r)
		opts.logf("  the same ask in this process at concurrency %d, run %d of %d", k, rep+1, reps)
		local, err := runFanout(ctx, "", n, k, distLatency, false)
		if err != nil {
			return nil, nil, fmt.Errorf("local at concurrency %d: %w", k, err)
		}
		r.Failed += local.Failed
		runs[len(runs)-1] = r
		locals = append(locals, local.Whole)
	}
	return runs, locals, nil
}

func medianOf(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// distFake answers the planner with the current plan, each sub-agent from
// its subtask, and the synthesis with a fixed text. It counts the
// sub-agent calls by API key: each worker has its ID as its key.
type distFake struct {
	srv   *llmtest.Server
	plan  atomic.Value // string
	mu    sync.Mutex
	calls map[string]int
}

func newDistFake() *distFake {
	f := &distFake{calls: map[string]int{}}
	f.plan.Store(distPlan(1, 1, ""))
	f.srv = llmtest.New(
		llmtest.Func(func(llmtest.RecordedRequest) llmtest.Reply { return llmtest.Text(f.plan.Load().(string)) }).WhenSystem(plannerMarker),
		llmtest.Always(llmtest.Text(filler("synthesis", 220))).WhenSystem(synthesisMarker),
		llmtest.Func(func(req llmtest.RecordedRequest) llmtest.Reply {
			f.mu.Lock()
			f.calls[req.APIKey()]++
			f.mu.Unlock()
			return llmtest.Text(filler(subtaskOf(req), 160))
		}),
	)
	return f
}

func (f *distFake) resetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.calls)
}

func (f *distFake) callsBy(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

// distPlan is fanoutPlan with tag in every subtask, so that each run's
// requests are new.
func distPlan(n, parts int, tag string) string {
	p := plan.Plan{Reasoning: "distributed fan-out benchmark"}
	for i := range n {
		p.Subtasks = append(p.Subtasks, plan.Subtask{
			Task:            fmt.Sprintf("Extract the facts of part %d, item %d (%s).", i%parts+1, i+1, tag),
			Skill:           "fact-extraction",
			ContextPointers: plan.Pointers{Sections: []string{fmt.Sprintf("Part %d", i%parts+1)}},
		})
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// workerProc is one baton worker process.
type workerProc struct {
	id     string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

func startWorker(baton, url, id, version, baseURL string) (*workerProc, error) {
	p := &workerProc{id: id, out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(baton, "worker", "--database-url", url, "--id", id, "--concurrency", itoa(distConcurrency),
		"--provider", "anthropic", "--model", ModelName, "--base-url", baseURL)
	p.cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY="+id, "BATON_APP_VERSION="+version)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start baton worker: %w", err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// ready waits for the worker's line that it takes items.
func (p *workerProc) ready(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.out.String(), "taking up to") {
		select {
		case <-p.exited:
			return fmt.Errorf("baton worker exited before it was ready: %s", strings.TrimSpace(p.out.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("baton worker not ready after %v: %s", limit, strings.TrimSpace(p.out.String()))
		}
	}
	return nil
}

// stop asks the worker to stop (it releases its items) and kills it if it
// has not within 30 seconds, or where there is no interrupt to send.
func (p *workerProc) stop() {
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// workersLog is the last lines of each worker's output, for an error.
func workersLog(procs []*workerProc) string {
	var b strings.Builder
	for i, p := range procs {
		lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
		fmt.Fprintf(&b, "\nworker %d: %s", i+1, strings.Join(lines[max(0, len(lines)-3):], " | "))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// syncBuffer is a bytes.Buffer safe for a process's output and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		// The worker logs a line per item: keep the tail only.
		rest := s.b.Bytes()[s.b.Len()-1<<19:]
		s.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
