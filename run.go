package baton

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/runlock"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/telemetry"
	"github.com/baton-dev/baton/workflow"
)

// ErrNoWorkflow is returned, wrapped, when the workflow file does not
// exist.
var ErrNoWorkflow = errors.New("no workflow file")

// RunRequest is one run of a skill workflow: the choices `baton run` and
// `baton resume` make with their flags. The zero value of every choice is
// the commands' default.
type RunRequest struct {
	// Workflow is the workflow file ("" is baton.yaml); its folder is the
	// workspace.
	Workflow string
	// Resume continues the workspace's unfinished run and fails when there
	// is none. Without it an unfinished run is resumed unless Fresh.
	Resume, Fresh bool
	// DryRun builds each step's fresh context and calls no model
	// (RunResult.Plan).
	DryRun bool
	// Provider, Model and BaseURL choose the provider; empty fields leave
	// the choice to the environment (ModelOptions). A Model given wins
	// over a skill's own model: key.
	Provider, Model, BaseURL string
	// AgentCmd, when not nil, is the command every skill step runs as (""
	// runs the steps on the provider); nil takes the workflow's agent_cmd.
	// The command is never taken from the run's own records, which an
	// agent may have written.
	AgentCmd *string
	// AgentTimeout bounds one agent process (0: runner.DefaultAgentTimeout).
	AgentTimeout time.Duration
	// MaxTurns bounds the tool rounds of one step (0: runner's default);
	// Concurrency the sub-agents in flight at once (0: runner's default);
	// MaxSteps the skill steps across resumes (0: the workflow's).
	MaxTurns, Concurrency, MaxSteps int
	// Engine, when set, records each step as a durable engine item
	// (the dbos engine's opener), named EngineName; nil keeps the steps'
	// journals in the workspace alone.
	Engine     runner.EngineOpener
	EngineName string
	// Calls is the call policy; its Concurrency defaults to one more than
	// the sub-agents', and its OnRetry to RunEvents.Retry.
	Calls CallPolicy
	// CallTimeout and IdleTimeout are ModelOptions'.
	CallTimeout, IdleTimeout time.Duration
	// NoHistory leaves the run out of the user's run history.
	NoHistory bool
}

// RunEvents are what a run reports as it goes. Every field is optional.
type RunEvents struct {
	// Start is called once, when the run is about to take its first step.
	Start func(RunStart)
	// Progress receives the run's steps, turns and calls, in order, on a
	// goroutine of its own.
	Progress func(runner.ProgressEvent)
	// Log receives one line per notable event (steps, resets, warnings).
	Log io.Writer
	// Retry reports a failed attempt that will be retried; it is called
	// from several goroutines at once.
	Retry func(attempt int, wait time.Duration, err error)
	// Notice says which run is resumed and with which agent command.
	Notice func(msg string)
	// Warning receives what the run goes on despite: a workflow warning,
	// a window the server cannot hold, a trace not exported.
	Warning func(msg string)
}

// RunStart is what a run is about to do.
type RunStart struct {
	Resuming bool
	// RunID is the unfinished run resumed, when one is.
	RunID    string
	AgentCmd string // "" when the steps run on the provider
	Provider string // "" when an agent command runs the steps
	Model    string
}

// RunResult is a run that began, or the plan of a dry run.
type RunResult struct {
	*runner.Result
	Workflow *workflow.Workflow
	// Dir is the run's folder (its log, journals and record); "" when no
	// run began.
	Dir string
	// IndexErr says why the run is not in the run history; the run itself
	// is not failed by it.
	IndexErr error
	// Plan is a dry run's.
	Plan *runner.Plan
}

// WithRunEvents reports a run's progress as it goes.
func WithRunEvents(e RunEvents) Option { return func(o *options) { o.run = e } }

// WithRunHistory adds a run that began to the run history with index,
// given the run's folder, instead of to the user's history.
func WithRunHistory(index func(runDir string) error) Option {
	return func(o *options) { o.runIndex = index }
}

// Run runs a skill workflow as `baton run` does, or resumes its unfinished
// run as `baton resume` does: the provider from the request or the
// environment inside baton's retry policy, limits and timeouts (Stack);
// the engine; a trace when an OTLP endpoint is set; the run added to the
// run history. It returns a result whenever a run began, also with an
// error, so that the caller can say how to resume; a nil result comes with
// an error about the request or the workspace.
func Run(ctx context.Context, req RunRequest, opts ...Option) (*RunResult, error) {
	o := options{getenv: os.Getenv}
	for _, opt := range opts {
		opt(&o)
	}
	if o.run.Warning != nil {
		o.events.Warning = o.run.Warning
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	wf, err := loadWorkflow(req.Workflow, o.warn)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		p, err := runner.DryRun(wf, req.Model)
		if err != nil {
			return nil, err
		}
		return &RunResult{Workflow: wf, Plan: p}, nil
	}
	cfg, start, err := o.runConfig(req, wf)
	if err != nil {
		return nil, err
	}
	flush, err := o.setupTracing(ctx)
	if err != nil {
		return nil, err
	}
	defer flush()
	if cfg.AgentCmd == "" { // an external agent brings its own model
		if err := o.runModel(ctx, req, cfg, &start); err != nil {
			return nil, err
		}
	}
	cfg.Trace = telemetry.Run(o.tracer, cfg.Provider, telemetry.CaptureContent(o.getenv))
	if o.run.Start != nil {
		o.run.Start(start)
	}
	run := runner.Run
	if start.Resuming {
		run = runner.Resume
	}
	res, runErr := run(ctx, *cfg)
	if res == nil || res.RunID == "" {
		return nil, runErr
	}
	out := &RunResult{Result: res, Workflow: wf, Dir: batondir.At(wf.Dir).Run(res.RunID)}
	// Interrupted, failed or done: every run that began is in the history.
	if !req.NoHistory {
		index := o.runIndex
		if index == nil {
			index = indexRunDir
		}
		out.IndexErr = index(out.Dir)
	}
	return out, runErr
}

// Validate checks the request's choices; its error names the field.
func (r RunRequest) Validate() error {
	switch {
	case r.MaxTurns < 0:
		return &RequestError{Field: "max_turns", Rule: "must be at least 1 (0 for the default)"}
	case r.Concurrency < 0:
		return &RequestError{Field: "concurrency", Rule: "must be at least 1 (0 for the default)"}
	case r.MaxSteps < 0:
		return &RequestError{Field: "max_steps", Rule: "must be at least 1 (0 for the workflow's)"}
	case r.AgentTimeout < 0:
		return &RequestError{Field: "agent_timeout", Rule: "must be positive (0 for the default)"}
	case r.Calls.MaxAttempts < 0:
		return &RequestError{Field: "max_attempts", Rule: "must be at least 1 (0 for the default)"}
	case r.Resume && r.Fresh:
		return &RequestError{Field: "fresh", Rule: "cannot go with resume"}
	}
	return nil
}

// loadWorkflow loads the workflow file and passes on its warnings.
func loadWorkflow(path string, warn func(string)) (*workflow.Workflow, error) {
	if path == "" {
		path = "baton.yaml"
	}
	wf, err := workflow.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %s: %w", ErrNoWorkflow, path, err)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range wf.Warnings {
		warn(w)
	}
	return wf, nil
}

// runConfig is the runner's configuration of the request, the agent
// command chosen and whether the run resumes.
func (o *options) runConfig(req RunRequest, wf *workflow.Workflow) (*runner.Config, RunStart, error) {
	agent := wf.AgentCmd
	if req.AgentCmd != nil {
		agent = *req.AgentCmd
	}
	if req.Engine != nil && agent != "" {
		return nil, RunStart{}, &RequestError{Field: "engine", Rule: strings.TrimSpace(req.EngineName + " records a step's model and tool calls; a step run by an agent command makes none that baton sees")}
	}
	start, err := o.chooseAgent(req, wf)
	if err != nil {
		return nil, start, err
	}
	cfg := &runner.Config{
		Workflow: wf, ModelName: req.Model, ModelExplicit: req.Model != "",
		AgentCmd: start.AgentCmd, AgentTimeout: req.AgentTimeout,
		MaxTurns: req.MaxTurns, MaxSteps: req.MaxSteps, SubagentConcurrency: req.Concurrency,
		Log: o.run.Log, Progress: o.run.Progress, Engine: req.Engine, EngineName: req.EngineName,
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.EngineName == "" {
		cfg.EngineName = "local"
	}
	return cfg, start, nil
}

// chooseAgent decides whether the run resumes and which agent command runs
// its steps, and gives notice of it.
func (o *options) chooseAgent(req RunRequest, wf *workflow.Workflow) (RunStart, error) {
	var info runner.RunInfo
	unfinished := false
	if req.Resume || !req.Fresh {
		var err error
		if info, unfinished, err = runner.UnfinishedRun(wf); err != nil {
			return RunStart{}, err
		}
	}
	start := RunStart{Resuming: req.Resume || (unfinished && !req.Fresh)}
	if start.Resuming && unfinished {
		start.RunID = info.ID
	}
	// A workspace another process is running is refused before anything
	// is said about resuming it; the runner's own lock is what guards it.
	if err := runlock.Check(wf.Dir); err != nil {
		return start, err
	}
	if req.AgentCmd != nil {
		start.AgentCmd = *req.AgentCmd
		if start.RunID != "" {
			o.notice(fmt.Sprintf("resuming run %s with %s", info.ID, describeAgent(start.AgentCmd)))
		}
		return start, nil
	}
	// The command comes from the workflow file, never from current.json:
	// anything under .baton/ may have been written by an agent, and a
	// resume must not run what an agent chose.
	start.AgentCmd = wf.AgentCmd
	switch {
	case start.RunID != "" && info.AgentCmd != start.AgentCmd:
		return start, fmt.Errorf("run %s started with %s; without --agent-cmd it would resume with %s, since %s; pass --agent-cmd explicitly to choose the command",
			info.ID, describeAgent(info.AgentCmd), describeAgent(start.AgentCmd), agentSource(wf))
	case start.RunID != "":
		o.notice(fmt.Sprintf("resuming run %s with %s", info.ID, describeAgent(start.AgentCmd)))
	case start.AgentCmd != "":
		o.notice(fmt.Sprintf("running each step with agent command %q (agent_cmd in %s)", start.AgentCmd, filepath.Base(wf.Path)))
	}
	return start, nil
}

// runModel puts the model of the request into cfg, traced, with the
// window its server reports.
func (o *options) runModel(ctx context.Context, req RunRequest, cfg *runner.Config, start *RunStart) error {
	wf := cfg.Workflow
	pol := req.Calls
	if pol.Concurrency == 0 {
		n := cfg.SubagentConcurrency
		if n == 0 {
			n = runner.DefaultSubagentConcurrency
		}
		// The sub-agents and the step that dispatched them.
		pol.Concurrency = n + 1
	}
	if pol.OnRetry == nil {
		pol.OnRetry = o.run.Retry
	}
	// Ollama is asked to run every request with the workflow's declared
	// window (capped by what the model supports).
	model, sel, err := o.resolve(ctx, ModelOptions{Provider: req.Provider, Model: req.Model, BaseURL: req.BaseURL,
		Window: wf.WindowTokens, CallTimeout: req.CallTimeout, IdleTimeout: req.IdleTimeout, Getenv: o.getenv}, pol)
	if err != nil {
		return err
	}
	cfg.Model = telemetry.Model(model, o.tracer, sel.Provider, telemetry.CaptureContent(o.getenv))
	cfg.ModelName, cfg.Provider = sel.Model, sel.Provider
	start.Provider, start.Model = sel.Provider, sel.Model
	if sel.Window > 0 {
		cfg.ServerWindow = sel.Window
		if wf.WindowTokens > sel.Window {
			o.warn(fmt.Sprintf("window_tokens %d is more than %s supports; every request is checked against its %d tokens", wf.WindowTokens, sel.Model, sel.Window))
		}
	}
	return nil
}

// indexRunDir adds a run's folder to the user's run history, rebuilding
// the history once when it is damaged.
func indexRunDir(dir string) error {
	d, err := history.Open("")
	if err != nil {
		return err
	}
	err = d.IndexRunDir(dir)
	d.Close()
	if !errors.Is(err, history.ErrDamaged) {
		return err
	}
	d, rerr := history.Repair("")
	if rerr != nil {
		return fmt.Errorf("%w; and it could not be rebuilt: %v", err, rerr)
	}
	defer d.Close()
	return d.IndexRunDir(dir)
}

func (o *options) notice(msg string) {
	if o.run.Notice != nil {
		o.run.Notice(msg)
	}
}

// describeAgent names an agent command for a message.
func describeAgent(cmd string) string {
	if cmd == "" {
		return "no agent command (steps on the provider)"
	}
	return fmt.Sprintf("agent command %q", cmd)
}

func agentSource(wf *workflow.Workflow) string {
	if wf.AgentCmd == "" {
		return filepath.Base(wf.Path) + " has no agent_cmd"
	}
	return "that is the agent_cmd in " + filepath.Base(wf.Path)
}
