// Package orchestrate runs `baton ask`: the four phases of skill-aware
// orchestration. A planner reads the context once and writes a plan; the
// assembler (deterministic, no model call) cuts one slice of the context per
// delegated subtask; sub-agents run in parallel, each on its slice with its
// skill's prompt (or, for a subtask with scope "all" or a slice too large
// for the window, over parts of it with their answers joined: map-reduce,
// mapreduce.go); a synthesis call joins their results with the planner's
// self-answers in plan order. Every call's usage is recorded, and the run is
// accounted against the naive baseline of sending the whole context to every
// sub-agent.
package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// Defaults for a run; each is a Config field a caller may change.
const (
	DefaultMaxSubtasks     = 6
	DefaultConcurrency     = 4
	DefaultTemperature     = 0.3
	DefaultSubagentTokens  = 1500
	DefaultPlannerTokens   = 4096
	DefaultSynthesisTokens = 4096
)

// Sentinel errors callers branch on for exit codes.
var (
	// ErrPartial means the run finished and produced an answer, but some
	// delegated subtasks failed, or a reply was cut at its token limit
	// (ErrTruncated); the record's subtasks and warnings say which.
	ErrPartial = errors.New("some subtasks failed")
	// ErrPlan means the planner's output was not a valid plan, even after
	// one repair request.
	ErrPlan = errors.New("planner did not produce a valid plan")
)

// Config is one ask run.
type Config struct {
	Task     string
	Context  string   // the whole context (documents already combined)
	Sources  []string // document names, for the record
	Planner  string   // a planner mode: PlannerAuto (default), PlannerLLM, PlannerFull or PlannerRetrieval
	Skills   *skill.Library
	Counter  *tokens.Counter
	Model    llm.Model // nil: no provider; the run is a dry run
	DryRun   bool
	FailFast bool

	Provider     string
	ModelName    string
	PlannerModel string // defaults to ModelName
	Concurrency  int
	MaxSubtasks  int
	// Temperature of the sub-agents and the synthesis; nil is
	// DefaultTemperature, and llm.Float(0) asks for 0.
	Temperature  *float64
	SubagentMax  int // max output tokens of a sub-agent (its return bound)
	PlannerMax   int
	SynthesisMax int
	// MaxFallbackTokens bounds what the subtasks whose pointers all
	// missed may send with the whole context in one ask: past it such a
	// subtask fails with a one-line reason instead of sending the context
	// again. 0 is the default, one single call's worth
	// (single_call_input_tokens); negative is no ceiling.
	MaxFallbackTokens int
	Stream            bool
	// Window, when > 0, is the context window in tokens of every model of
	// the run, in place of the one tokens.Window knows (--window).
	Window int
	// Parts, when several documents were combined into Context, locates
	// each (document.Context.Parts); the record's document map draws every
	// document from it. Without it Context is one document.
	Parts    []slice.Part
	Progress func(Event) // called from several goroutines at once
	// OnText, when set, receives the synthesis as it is written: its
	// request streams, and every piece of text is passed on as it arrives
	// (llm.Request.OnText). OnRestart is called when a retried synthesis
	// starts its text again from the beginning, after earlier pieces were
	// passed on: those are void (llm.Request.OnRestart). Both are called
	// on Ask's goroutine, and only during synthesis.
	OnText    func(delta string)
	OnRestart func()
	Now       func() time.Time
	// Redactor masks secrets (an API key, a gateway token) in every error
	// text the run quotes: in the record, in progress events, in the
	// synthesis prompt and in the error Ask returns. Without one, and on
	// top of it, the secret parts of any URL in those texts are masked
	// (llm.ScrubURLs), so a model that was not wrapped by the provider
	// package still cannot leak its base URL's token.
	Redactor *llm.Redactor
	// Span, when set, starts a trace span around one part of the run:
	// part "plan" (sub nil) or "subtask" (sub the subtask's result, filled
	// in by the time end is called). The context it returns carries the
	// span to the part's model calls; end closes it with the part's error.
	// It is called from several goroutines at once.
	Span func(ctx context.Context, part string, sub *SubtaskResult) (context.Context, func(err error))
	// Engine, when set, runs every sub-agent call as an engine item
	// instead of in this process: a delegated subtask's whole-slice call
	// as SubagentTask, its map and reduce calls as CallTask; with the
	// dbos engine, on whichever worker takes it. Documents then keeps the
	// context, which items name by hash. The planner and the synthesis
	// run here.
	Engine    engine.Engine
	Documents Documents
}

// Event reports progress of one subtask (or a phase, with Index -1).
type Event struct {
	Index   int
	Phase   string // "plan", "assemble", "dispatch", "synthesis"; "map" and "reduce" for the calls of a map-reduce subtask
	Status  string // "running", "ok", "failed", "skipped", "retrying"; in assemble "self" (answered by the planner) or "queued"; map and reduce events are all "running", one as each call starts
	Message string
}

func (c *Config) defaults() {
	if c.Planner == "" {
		c.Planner = PlannerAuto
	}
	if c.Counter == nil {
		c.Counter = tokens.ForModel(c.ModelName)
	}
	if c.Skills == nil {
		c.Skills = skill.Builtins()
	}
	if c.PlannerModel == "" {
		c.PlannerModel = c.ModelName
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxSubtasks <= 0 {
		c.MaxSubtasks = DefaultMaxSubtasks
	}
	if c.Temperature == nil {
		c.Temperature = llm.Float(DefaultTemperature)
	}
	if c.SubagentMax <= 0 {
		c.SubagentMax = DefaultSubagentTokens
	}
	if c.PlannerMax <= 0 {
		c.PlannerMax = DefaultPlannerTokens
	}
	if c.SynthesisMax <= 0 {
		c.SynthesisMax = DefaultSynthesisTokens
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = func(Event) {}
	}
	if c.Span == nil {
		c.Span = func(ctx context.Context, _ string, _ *SubtaskResult) (context.Context, func(error)) {
			return ctx, func(error) {}
		}
	}
}

// run holds the state of one Ask call.
type run struct {
	cfg    Config
	doc    *slice.Document
	rec    *Record
	mu     sync.Mutex // guards rec.Warnings and rec.Usage during dispatch
	acct   Accounting
	failed int // delegated subtasks that failed
	// cuts names the replies left cut at their token limit (truncation.go),
	// under mu.
	cuts  []string
	calib tokens.Calibration

	naiveOnce  sync.Once
	sysTokens  map[string]int // by skill name
	naiveBlock int

	// slots bounds the sub-agent calls in flight, plain and map-reduce
	// alike, to Concurrency (dispatch.go).
	slots chan struct{}

	counts textCounts // the context counted once (count.go)

	start time.Time // the run's start, which the calls' times count from

	// The context stored once for the engine's items (remote.go).
	docOnce sync.Once
	docHash string
	docErr  error
}

func (r *run) warnf(format string, a ...any) {
	r.mu.Lock()
	r.rec.Warnings = append(r.rec.Warnings, fmt.Sprintf(format, a...))
	r.mu.Unlock()
}

// Ask runs the four phases. It always returns a record, also on error, so
// the caller can save what was done: nothing already paid for is lost.
func Ask(ctx context.Context, cfg Config) (*Record, error) {
	cfg.defaults()
	start := cfg.Now()
	doc, perr := slice.ParseContext(ctx, cfg.Context)
	if perr != nil {
		// Stopped in the structure pass: nothing was planned or paid,
		// and the record says so.
		doc = slice.LinesOnly([]byte(cfg.Context))
	}
	r := &run{cfg: cfg, doc: doc, start: start}
	r.rec = &Record{
		ID:           newRunID(start),
		StartedAt:    start.UTC(),
		Task:         cfg.Task,
		Documents:    cfg.Sources,
		Provider:     cfg.Provider,
		Model:        cfg.ModelName,
		PlannerModel: cfg.PlannerModel,
		Planner:      cfg.Planner,
		PlannerMode:  cfg.Planner,
		DryRun:       cfg.DryRun || cfg.Model == nil,
		Subtasks:     []SubtaskResult{},
		Windows:      []ModelWindow{},
		Warnings:     []string{},
		Calls:        []Call{},
	}
	r.rec.DocumentMap = documentMap(r.doc, cfg.Context, cfg.Sources, cfg.Parts)
	if r.rec.DryRun {
		r.rec.Provider, r.rec.Model, r.rec.PlannerModel = "", "", ""
	}
	if n := doc.CappedLines(); n > 0 {
		r.warnf("%d lines nest block quotes or list items deeper than %d levels; the structure pass read the deeper part as text", n, slice.MaxNesting)
	}
	if n := doc.HeadingsCut(); n > 0 {
		r.warnf("the document has %d headings more than the %d the structure pass takes as sections; it read them as text, part of the last section", n, slice.MaxHeadings)
	}
	var err error
	if perr != nil {
		err = fmt.Errorf("reading the documents' structure: %w", perr)
	} else {
		r.acct.Counter = string(cfg.Counter.Encoding())
		// Counting a large context takes a while: a cancel during it
		// ends the run here, before any plan.
		if err = r.countContext(ctx); err == nil {
			r.acct.ContextTokens = r.contextCounted().Tokens()
			r.singleCall()
			r.acct.FallbackCeiling = r.fallbackCeiling()
			if err = ctx.Err(); err == nil {
				err = r.ask(ctx)
			}
		}
	}
	r.acct.finish()
	r.acct.Calibration = r.calib.Summary()
	r.rec.Accounting = r.acct
	sortCalls(r.rec.Calls)
	u := &r.rec.Usage
	u.Total = u.Planner.Add(u.Subagents).Add(u.Synthesis)
	r.rec.DurationMS = cfg.Now().Sub(start).Milliseconds()
	err = r.cfg.Redactor.Error(err)
	if err != nil && !errors.Is(err, ErrPartial) {
		r.rec.Error = err.Error()
	}
	r.rec.Status = status(r.rec, err)
	return r.rec, err
}

func (r *run) ask(ctx context.Context) error {
	if strings.TrimSpace(r.cfg.Task) == "" {
		return errors.New("the task is empty")
	}
	if !ValidPlanner(r.cfg.Planner) {
		return fmt.Errorf("%w %q: use auto, full, llm, outline or retrieval", ErrPlannerMode, r.cfg.Planner)
	}
	d := &r.rec.PhaseDurationMS
	var p *plan.Plan
	err := r.timed(&d.Plan, func() (err error) {
		pctx, end := r.cfg.Span(ctx, "plan", nil)
		p, err = r.plan(pctx)
		end(err)
		return err
	})
	if err != nil {
		return err
	}
	r.rec.Plan = p
	if r.rec.Planner == PlannerDirect {
		return r.timed(&d.Synthesis, func() error { return r.direct(ctx) })
	}
	for _, w := range p.Warnings {
		r.warnf("plan: %s", w)
	}
	r.timed(&d.Assemble, func() error { r.assemble(p); return nil })
	if r.rec.DryRun {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.estimate()
		return nil
	}
	if err := r.timed(&d.Dispatch, func() error { return r.dispatch(ctx) }); err != nil {
		return err
	}
	return r.timed(&d.Synthesis, func() error { return r.synthesise(ctx) })
}

// timed runs one phase and stores its wall time in *ms.
func (r *run) timed(ms *int64, phase func() error) error {
	t0 := r.cfg.Now()
	err := phase()
	*ms = r.cfg.Now().Sub(t0).Milliseconds()
	return err
}

// ---- Phase 2: assemble (no model call) ----

func (r *run) assemble(p *plan.Plan) {
	r.cfg.Progress(Event{Index: -1, Phase: "assemble", Status: "running"})
	for i, st := range p.Subtasks {
		res := SubtaskResult{Index: i, Task: st.Task, Skill: st.Skill}
		if st.IsSelf() {
			res.Mode, res.Status, res.Output = ModeSelf, StatusOK, st.Answer
			r.cfg.Progress(Event{Index: i, Phase: "assemble", Status: "self", Message: st.Task})
		} else {
			res.Mode, res.Status = ModeDelegated, StatusSkipped
			r.cfg.Progress(Event{Index: i, Phase: "assemble", Status: "queued", Message: st.Task})
		}
		r.rec.Subtasks = append(r.rec.Subtasks, res)
	}
}

// ---- Phase 4: synthesis ----

func (r *run) synthesise(ctx context.Context) error {
	ok := 0
	for _, s := range r.rec.Subtasks {
		if s.Status == StatusOK {
			ok++
		}
	}
	if ok == 0 {
		return errors.New("every subtask failed; nothing to synthesise")
	}
	r.cfg.Progress(Event{Index: -1, Phase: "synthesis", Status: "running"})
	user := synthesisUser(r.cfg.Task, r.rec.Subtasks)
	req := &llm.Request{
		Model:       r.cfg.ModelName,
		System:      synthesisSystem,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: user}},
		Temperature: llm.Float(*r.cfg.Temperature),
		MaxTokens:   r.cfg.SynthesisMax,
		Stream:      r.cfg.Stream,
		OnText:      r.cfg.OnText,
		OnRestart:   r.cfg.OnRestart,
	}
	n := r.requestTokens(req)
	send := func(req *llm.Request) (*llm.Response, error) {
		return r.call(ctx, "synthesis", req, n, &r.rec.Usage.Synthesis, &r.acct.SynthesisInputTokens)
	}
	resp, err := send(req)
	if err == nil {
		resp = r.uncut("the synthesis", req, n, resp, send)
	}
	// The naive run would have sent the same synthesis prompts.
	r.acct.NaiveInputTokens += r.acct.PlannerInputTokens + r.acct.SynthesisInputTokens
	if err != nil {
		return fmt.Errorf("synthesis: %w", err)
	}
	r.rec.Answer = resp.Text
	r.cfg.Progress(Event{Index: -1, Phase: "synthesis", Status: "ok"})
	return r.partialResult()
}

func (r *run) delegated() int {
	n := 0
	for _, s := range r.rec.Subtasks {
		if s.Mode == ModeDelegated {
			n++
		}
	}
	return n
}

// call sends one request of n counted prompt tokens, adds its reported
// usage to *usage and n to *counted. A request that would not fit its
// model's window is not sent (a *WindowError). The prompt is counted even
// when the call fails: it was sent.
func (r *run) call(ctx context.Context, what string, req *llm.Request, n int, usage *llm.Usage, counted *int) (*llm.Response, error) {
	if err := r.fits(what, req, n); err != nil {
		return nil, err
	}
	*counted += n
	r.rec.ModelCalled = true
	phase, label := what, ""
	if what == "plan repair" || what == "plan expand" {
		phase, label = CallPlanner, what
	}
	cctx, done := r.startCall(ctx, phase, -1, label, n)
	resp, err := r.cfg.Model.Generate(cctx, req)
	done(resp, err)
	if resp != nil {
		*usage = usage.Add(resp.Usage)
		r.calib.Observe(int64(n), resp.Usage.PromptTokens())
	}
	return resp, err
}

// systemTokens counts a skill's prompt once per run: many subtasks share a
// few skills.
func (r *run) systemTokens(skill, system string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sysTokens == nil {
		r.sysTokens = map[string]int{}
	}
	n, ok := r.sysTokens[skill]
	if !ok {
		n = r.cfg.Counter.Count(system)
		r.sysTokens[skill] = n
	}
	return n
}

// naiveBlockTokens counts the whole context as a naive prompt would carry
// it; every naive prompt carries the same block, so it is counted once.
func (r *run) naiveBlockTokens() int {
	r.naiveOnce.Do(func() { r.naiveBlock = r.blockTokens(r.contextCounted()) })
	return r.naiveBlock
}

func (r *run) count(parts ...string) int {
	n := 0
	for _, p := range parts {
		n += r.cfg.Counter.Count(p)
	}
	return n
}

// errText is err as the run quotes it, in the record, in progress events
// and in the synthesis prompt: on one line, with secrets masked.
func (r *run) errText(err error) string {
	return r.cfg.Redactor.Text(oneLine(err))
}

// oneLine keeps error text to one line for records and terminals.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// generateRecovered is Model.Generate with a panic turned into an error: a
// bug in a provider client or an SDK on one sub-agent's goroutine would
// otherwise end the process with a stack trace and lose the whole run's
// record; as an error it is one failed subtask, recorded like any other.
func generateRecovered(ctx context.Context, m llm.Model, req *llm.Request) (resp *llm.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("internal error (a bug in baton): %v", p)
		}
	}()
	return m.Generate(ctx, req)
}
