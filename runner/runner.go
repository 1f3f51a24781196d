// Package runner runs a baton workflow (`baton run`): skill steps that each
// start in a fresh context holding only their SKILL.md, the capsule,
// state.yaml and the files they declare; decisions that travel through
// state.yaml; a context budget evaluated at every phase boundary and between
// tool rounds, with a complete ledger entry written before any reset; and
// sub-agents whose returns are bounded.
//
// Everything a run does is recorded under <workspace>/.baton/runs/<id>/:
// events.jsonl (the run log that `baton ledger lint` reads) and a journal
// per step that makes the run resumable: every model response is recorded,
// keyed by the hash of its request, and every tool call's result and
// effects, before they are used, so a run stopped at any point (a provider
// failure, --max-turns, a signal, a crash) resumes in the same step without
// paying for a completed call twice or doing a tool call's work again.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/runlock"
	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/tokens"
	"github.com/baton-dev/baton/workflow"
)

// Defaults a caller may change in Config.
const (
	DefaultMaxTurns            = 40
	DefaultMaxTokens           = 4096
	DefaultSubagentConcurrency = 4
)

// ErrNoUnfinishedRun is returned by Resume when there is nothing to resume.
var ErrNoUnfinishedRun = errors.New("no unfinished run to resume")

// ErrMaxSteps is wrapped when a run stops at its step cap (max_steps or
// Config.MaxSteps). The run stays resumable.
var ErrMaxSteps = errors.New("stopped")

// Config is one run of a workflow.
type Config struct {
	Workflow  *workflow.Workflow
	Model     llm.Model
	ModelName string
	Provider  string
	// ModelExplicit says ModelName was chosen by the user (--model): it
	// then wins over a skill's model: key (skillmodel.go).
	ModelExplicit bool
	// ServerWindow, when > 0, is the window the provider's server runs
	// every request with (Ollama's num_ctx, which it enforces by dropping
	// what does not fit, silently). No budget or check of the run uses a
	// larger window than it, whatever window_tokens says.
	ServerWindow int
	// MaxTurns bounds the tool rounds of one step: a runaway agent stops.
	MaxTurns            int
	MaxTokens           int
	SubagentConcurrency int
	// Log receives one line per notable event (steps, resets, warnings).
	Log io.Writer
	Now func() time.Time
	// AgentCmd, when set, runs every skill step as a fresh `sh -c AgentCmd`
	// process instead of the built-in loop; Model may then be nil. See
	// agentcmd.go for what the process reads and must write. Resume runs
	// what it is given here, never the command current.json records.
	AgentCmd string
	// AgentTimeout bounds one agent process (default DefaultAgentTimeout).
	AgentTimeout time.Duration
	// MaxSteps, when positive, replaces the workflow's max_steps: the most
	// skill steps the run may take, counted across resumes by step number.
	MaxSteps int
	// Progress, when set, receives what the run is doing as it goes (see
	// progress.go): on its own goroutine, in order, never able to stall or
	// fail the run.
	Progress func(ProgressEvent)
	// Trace, when set, is told where the run, its steps, sub-agents and
	// tool calls begin and end, with their contexts (trace.go).
	Trace Tracer
	// Engine, when set, runs each skill step as one durable engine item
	// (durable.go); nil runs the steps over their journals alone.
	Engine EngineOpener
	// EngineName names Engine in the run's records and messages (the
	// --engine value).
	EngineName string
}

// Result is what a finished run reports.
type Result struct {
	RunID    string
	Steps    int
	Resets   int
	Summary  string // the last step's summary
	Usage    llm.Usage
	Warnings []string
	Replayed int // model calls answered from the journal on resume
	// ReplayedTools counts tool calls whose result and effects came from
	// the journal on resume instead of running again.
	ReplayedTools int
}

// runner holds one run.
type runner struct {
	cfg Config
	wf  *workflow.Workflow
	lib *skill.Library
	ws  *workspace.Workspace // baton's own view: step contexts, state, ledger
	// tools is the workspace as a model's tool calls see it: baton's run
	// records, .git, the workflow, skills and protect: patterns denied;
	// state, ledger and capsule read-only.
	tools   *workspace.Workspace
	budget  budget.Budget
	counter *tokens.Counter
	obs     *observer // Config.Progress, fed by progress.go
	id      string
	dir     string // .baton/runs/<id>
	log     *runlog.Writer
	lock    *runlock.Lock // this process's hold on the workspace (lock.go)
	models  skillModels   // each skill's model: choice (skillmodel.go)
	// eng runs the steps as durable items when Config.Engine is set; host
	// hands its step task the step being run (durable.go).
	eng  engine.Engine
	host *stepHost

	mu     sync.Mutex
	result Result
}

func (c *Config) defaults() {
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.SubagentConcurrency <= 0 {
		c.SubagentConcurrency = DefaultSubagentConcurrency
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

func newRunner(cfg Config) (*runner, error) {
	cfg.defaults()
	wf := cfg.Workflow
	lib, problems, err := wf.Library()
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		if p.Severity == skill.Error {
			return nil, fmt.Errorf("skill %s", p)
		}
	}
	if err := wf.Validate(lib); err != nil {
		return nil, err
	}
	ws, err := workspace.New(wf.Dir)
	if err != nil {
		return nil, err
	}
	deny, readOnly := protectedRules(wf)
	tools, err := ws.Restrict(workspace.Rules{Deny: deny, ReadOnly: readOnly, Write: wf.Writes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wf.Path, err)
	}
	window, _ := wf.Window(cfg.ModelName)
	if cfg.ServerWindow > 0 {
		window = min(window, cfg.ServerWindow)
	}
	b, err := budget.New(window, wf.ThresholdFraction)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wf.Path, err)
	}
	r := &runner{cfg: cfg, wf: wf, lib: lib, ws: ws, tools: tools, budget: b, counter: tokens.ForModel(cfg.ModelName)}
	if err := r.preflight(); err != nil {
		return nil, err
	}
	return r, nil
}

// preflight reads state.yaml and the ledger before anything runs: a file
// baton cannot read safely stops the run with one line, before a model is
// paid and before anything is written.
func (r *runner) preflight() error {
	f, err := state.Load(r.statePath())
	if err != nil {
		return err
	}
	if err := f.CheckCycle(r.wf.Flow); err != nil {
		return err
	}
	_, problems, err := ledger.Read(r.ledgerPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("ledger %s (fix it by hand; baton never rewrites a ledger)", problems[0])
	}
	return nil
}

func (r *runner) open(id string) error {
	// The id becomes a path: one that is not baton's own never gets that far.
	if err := CheckRunID(id); err != nil {
		return err
	}
	r.id = id
	r.dir = batondir.At(r.ws.Root()).Run(id)
	w, err := runlog.Open(batondir.At(r.ws.Root()).RunLog(id))
	if err != nil {
		return err
	}
	r.log = w
	r.result.RunID = id
	r.obs = newObserver(r.cfg.Progress)
	return nil
}

func (r *runner) event(e runlog.Event) {
	e.Run = r.id
	r.stamp(&e)
	if e.Time.IsZero() {
		e.Time = r.cfg.Now().UTC()
	}
	if err := r.log.Write(e); err != nil {
		r.warn(fmt.Sprintf("run log: %v", err))
	}
}

func (r *runner) logf(format string, a ...any) {
	fmt.Fprintf(r.cfg.Log, format+"\n", a...)
}

func (r *runner) warn(msg string) {
	r.mu.Lock()
	r.result.Warnings = append(r.result.Warnings, msg)
	r.mu.Unlock()
	r.logf("warning: %s", msg)
}

// maxSteps is the run's step cap: Config.MaxSteps, else the workflow's.
func (r *runner) maxSteps() int {
	if r.cfg.MaxSteps > 0 {
		return r.cfg.MaxSteps
	}
	if r.wf.MaxSteps > 0 {
		return r.wf.MaxSteps
	}
	return workflow.DefaultMaxSteps
}

func (r *runner) statePath() string {
	return filepath.Join(r.ws.Root(), filepath.FromSlash(r.wf.State))
}
func (r *runner) ledgerPath() string {
	return filepath.Join(r.ws.Root(), filepath.FromSlash(r.wf.Ledger))
}

// Run starts a new run of the workflow.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	release, err := r.lockWorkspace()
	if err != nil {
		return nil, err
	}
	defer release()
	if err := r.open(newID(r.cfg.Now())); err != nil {
		return nil, err
	}
	if err := r.openEngine(ctx); err != nil {
		r.log.Close()
		return nil, err
	}
	defer r.closeEngine()
	ctx, endTrace := r.trace(ctx, Part{Kind: PartRun, Workflow: r.wf.Name, Model: r.cfg.ModelName})
	defer func() { endTrace(End{Err: err, Result: res}) }()
	defer r.log.Close()
	defer r.closeProgress()
	if err := r.writeInfo("running"); err != nil {
		return nil, err
	}
	var phases []string
	for _, p := range r.wf.Phases {
		phases = append(phases, p.Name)
	}
	r.event(runlog.Event{Type: runlog.RunStart, Phases: phases, LedgerPath: r.wf.Ledger,
		WindowTokens: r.budget.Window, ThresholdTokens: r.budget.Threshold(), Model: r.cfg.ModelName})
	first := r.wf.Phases[0]
	r.event(runlog.Event{Type: runlog.PhaseStart, Phase: first.Name})
	r.logf("run %s: phase %s", r.id, first.Name)
	return r.loop(ctx, position{phase: 0, skill: first.Skill})
}

// Resume continues the workspace's unfinished run: from the run log it
// finds the last completed step and where the run was going next (the
// handoff.next_skill it recorded in state.yaml), and re-enters an
// unfinished step (one that failed, was interrupted or died) under its own
// number through its journal, so recorded calls are not paid for again and
// recorded tool calls not run again. Sessions are seeded from the newest
// ledger entry, never from a transcript.
func Resume(ctx context.Context, cfg Config) (res *Result, err error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	release, err := r.lockWorkspace()
	if err != nil {
		return nil, err
	}
	defer release()
	info, ok, err := UnfinishedRun(r.wf)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoUnfinishedRun
	}
	if info.Engine != r.engineName() {
		return nil, fmt.Errorf("run %s records its steps on engine %s; resume it with --engine %s (on engine %s it would not find what was recorded and would pay for those calls again)",
			info.ID, orLocal(info.Engine), orLocal(info.Engine), orLocal(r.engineName()))
	}
	if err := r.open(info.ID); err != nil {
		return nil, err
	}
	if err := r.openEngine(ctx); err != nil {
		r.log.Close()
		return nil, err
	}
	defer r.closeEngine()
	ctx, endTrace := r.trace(ctx, Part{Kind: PartRun, Workflow: r.wf.Name, Model: r.cfg.ModelName, Resume: true})
	defer func() { endTrace(End{Err: err, Result: res}) }()
	defer r.log.Close()
	defer r.closeProgress()
	events, problems, err := runlog.Read(batondir.At(r.ws.Root()).RunLog(r.id))
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		if !p.Torn {
			return nil, fmt.Errorf("run log: %s", p)
		}
	}
	pos, err := r.position(events)
	if err != nil {
		return nil, err
	}
	if pos.skill == workflow.DoneValue {
		// The last step ended the run, and the process died before it
		// said so: nothing is left to do but record the end.
		r.event(runlog.Event{Type: runlog.PhaseEnd, Phase: r.wf.Phases[pos.phase].Name})
		r.event(runlog.Event{Type: runlog.RunEnd, Status: "ok"})
		r.logf("run %s: its last step had ended the run; recorded the end", r.id)
		return &r.result, r.writeInfo("done")
	}
	// A session resumes from a ledger entry, never from memory or a
	// transcript. A run that died before writing any gets one now, composed
	// from state.yaml, before anything else happens.
	entry, err := ledger.Latest(r.ledgerPath())
	if err != nil {
		if !errors.Is(err, ledger.ErrNoEntry) && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		phase := r.wf.Phases[pos.phase].Name
		e, cerr := r.composeEntry(phase, phase, pos.skill, nil)
		if cerr != nil {
			return nil, cerr
		}
		e.NextStep = fmt.Sprintf("resume the run at skill %s (step %d)", pos.skill, pos.seq+1)
		if err := r.appendLedger(e); err != nil {
			return nil, err
		}
		entry = &e
	}
	ev := runlog.Event{Type: runlog.Resume, Phase: r.wf.Phases[pos.phase].Name, Skill: pos.skill, From: runlog.FromLedger, LedgerTime: entry.Time}
	r.event(ev)
	r.mark(ctx, ev)
	r.logf("run %s: resuming at step %d (%s, phase %s)", r.id, pos.seq+1, pos.skill, r.wf.Phases[pos.phase].Name)
	return r.loop(ctx, pos)
}

// loop runs steps from pos until the workflow is done.
func (r *runner) loop(ctx context.Context, pos position) (*Result, error) {
	maxSteps := r.maxSteps()
	var open *journal // the journal of the step being recorded
	defer func() {
		if open != nil {
			open.close()
		}
	}()
	for {
		if open != nil {
			open.close()
			open = nil
		}
		// pos.seq counts from the run log's step numbers, so a resume
		// goes on counting where the run stopped.
		if pos.seq >= maxSteps {
			return &r.result, fmt.Errorf("%w after %d steps (max_steps); raise max_steps in %s or pass --max-steps, then baton resume",
				ErrMaxSteps, maxSteps, filepath.Base(r.wf.Path))
		}
		pos.seq++
		sr := &stepRun{r: r, seq: pos.seq, phase: pos.phase, skillName: pos.skill, seed: pos.seed}
		sr.progress(ProgressEvent{Kind: ProgressStepStart})
		step, err := r.runStep(ctx, sr, pos)
		open = sr.j
		var fe *finishError
		if errors.As(err, &fe) {
			return &r.result, fe.err
		}
		if err != nil {
			sr.stepEnd("", err)
			return &r.result, r.stepFailed(ctx, pos, err)
		}

		switch step.Move {
		case workflow.Done:
			r.event(runlog.Event{Type: runlog.PhaseEnd, Phase: r.wf.Phases[pos.phase].Name})
			r.event(runlog.Event{Type: runlog.RunEnd, Status: "ok"})
			if err := r.writeInfo("done"); err != nil {
				return &r.result, err
			}
			return &r.result, nil
		case workflow.Boundary:
			seed, err := r.boundary(ctx, pos, step, sr)
			if err != nil {
				return &r.result, err
			}
			pos.seed = seed
		}
		pos.phase, pos.skill = step.Phase, step.Skill
	}
}

// boundary makes and records the reset evaluation at a phase boundary. The
// step just finished measured its sessions; the projection adds what the
// next phase expects. A reset writes a complete ledger entry first and
// returns it as the seed of the next phase's sessions.
func (r *runner) boundary(ctx context.Context, pos position, step workflow.Step, sr *stepRun) (string, error) {
	from, to := r.wf.Phases[pos.phase], r.wf.Phases[step.Phase]
	d := sr.session.AtBoundary(to.ExpectTokens)
	ev := runlog.Event{Type: runlog.BoundaryEvaluation, Phase: from.Name, NextPhase: to.Name,
		ProjectedTokens: d.Projected, ThresholdTokens: d.Threshold, WindowTokens: d.Window, ContextFraction: d.Fraction,
		Decision: runlog.DecisionContinue}
	if d.Reset {
		ev.Decision = runlog.DecisionReset
	}
	r.event(ev)
	r.mark(ctx, ev)
	r.event(runlog.Event{Type: runlog.PhaseEnd, Phase: from.Name})
	seed := ""
	if d.Reset {
		entry, err := r.composeEntry(from.Name, to.Name, to.Skill, sr)
		if err != nil {
			return "", err
		}
		if err := r.appendLedger(entry); err != nil {
			return "", err
		}
		reset := runlog.Event{Type: runlog.Reset, Phase: from.Name, Reason: runlog.ReasonBoundary, LedgerTime: entry.Time,
			ContextFraction: d.Fraction, ContextTokens: d.Projected, Mode: "fresh_session"}
		r.event(reset)
		reset.ThresholdTokens, reset.WindowTokens = d.Threshold, d.Window
		r.mark(ctx, reset)
		r.result.Resets++
		seed = string(ledger.Render(entry))
		sr.progress(ProgressEvent{Kind: ProgressReset, Reason: string(runlog.ReasonBoundary), ContextTokens: d.Projected})
		r.logf("boundary %s → %s: projected %d of %d tokens; reset, seeded from the ledger", from.Name, to.Name, d.Projected, d.Threshold)
	} else {
		r.logf("boundary %s → %s: projected %d of %d tokens; no reset needed", from.Name, to.Name, d.Projected, d.Threshold)
	}
	r.event(runlog.Event{Type: runlog.PhaseStart, Phase: to.Name})
	return seed, nil
}

func (r *runner) appendLedger(e ledger.Entry) error {
	err := ledger.Append(r.ledgerPath(), e)
	complete := err == nil
	ev := runlog.Event{Type: runlog.LedgerWritten, Phase: e.Phase, LedgerTime: e.Time, Complete: runlog.Bool(complete)}
	var inc *ledger.IncompleteError
	if errors.As(err, &inc) {
		ev.Missing = inc.Missing
	}
	r.event(ev)
	return err
}

// composeEntry writes the ledger entry baton can vouch for itself, from
// state.yaml and the run: decisions with their evidence, completed steps
// with the run log as evidence, the files the phase wrote. It is complete by
// construction, which is what a forced reset needs.
func (r *runner) composeEntry(phase, nextPhase, nextSkill string, sr *stepRun) (ledger.Entry, error) {
	f, err := state.Load(r.statePath())
	if err != nil {
		return ledger.Entry{}, err
	}
	h := f.Handoff()
	e := ledger.Entry{
		Phase:        phase,
		Time:         r.cfg.Now().UTC().Truncate(time.Second),
		CurrentPhase: nextPhase,
		NextStep:     fmt.Sprintf("run skill %s", nextSkill),
	}
	for _, d := range h.Decisions {
		e.FrozenDecisions = append(e.FrozenDecisions, d.Decision+" ("+d.Evidence+")")
	}
	cyc := f.Cycle(r.wf.Flow)
	for _, s := range cyc.CompletedSteps {
		e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: "completed step " + s, Evidence: filepath.ToSlash(batondir.Rel.RunLog(r.id))})
	}
	if sr != nil {
		e.Artifacts = append(e.Artifacts, sr.env.written...)
	}
	e.OpenTickets = append(e.OpenTickets, h.OpenDecisions...)
	if h.Context != "" {
		e.OpenTickets = append(e.OpenTickets, "context: "+h.Context)
	}
	return e, nil
}

func derefOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func logUsage(u llm.Usage) *runlog.Usage {
	return &runlog.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
		CacheReadTokens: int(u.CacheReadInputTokens), CacheWriteTokens: int(u.CacheCreationInputTokens)}
}
