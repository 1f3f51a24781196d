package baton

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/telemetry"
	"github.com/baton-dev/baton/tokens"
)

// RunsDir is where run records are saved by default, relative to the
// working folder: the folder `baton runs` and the reports read.
const RunsDir = ".baton/runs"

// AskRequest is one ask: the task, the documents, and the choices
// `baton ask`'s flags make. The zero value of every choice is the
// command's default.
type AskRequest struct {
	Task string
	// Documents are paths: a file, a folder (its markdown and text files)
	// or "-" for Stdin. Context, when set, is the documents already read,
	// and Documents is then not read.
	Documents []string
	Stdin     io.Reader
	Context   *document.Context

	// Planner is auto (""), full (or llm), outline or retrieval.
	Planner      string
	PlannerModel string // "" is the run's model
	// Provider, Model and BaseURL choose the provider; empty fields leave
	// the choice to the environment (ModelOptions).
	Provider, Model, BaseURL string
	// Window, when > 0, is the context window of every model of the run
	// in place of the known one; no request over it is sent.
	Window int
	// Concurrency is the sub-agents in flight at once (0: 4);
	// MaxSubtasks the most subtasks a plan may have (0: 6).
	Concurrency, MaxSubtasks int
	// MaxFallbackTokens bounds the whole-context fallbacks of subtasks
	// whose pointers all missed: 0 is one single call's worth, -1 none.
	MaxFallbackTokens int
	// SubagentMaxTokens bounds each sub-agent's return (0: the default).
	SubagentMaxTokens int
	// Temperature of the sub-agents and the synthesis: nil is
	// orchestrate.DefaultTemperature; llm.Float(0) asks for 0.
	Temperature *float64
	// DryRun plans and slices without calling a model.
	DryRun bool
	// DryRunWithoutProvider runs as a dry run, instead of failing with
	// llm.ErrNoProvider, when the environment names no provider and the
	// request none either (Start.NoProvider says so).
	DryRunWithoutProvider bool
	FailFast              bool
	// Stream makes every request use the providers' streaming endpoints;
	// Events.Text receives the synthesis as it is written.
	Stream bool
	// Skills is the library of skills (nil: the built-in ones); SkillDirs
	// are folders of custom skills added to it, which override skills of
	// the same names.
	Skills    *skill.Library
	SkillDirs []string
	// Prices is a YAML file correcting the built-in list prices; "" is
	// pricing.DefaultPath ($BATON_PRICES, else baton's config folder), and
	// BuiltinPrices prices with the built-in list alone.
	Prices        string
	BuiltinPrices bool
	// RunsDir is where the record is saved ("" is RunsDir) unless NoSave.
	RunsDir string
	NoSave  bool
	// Calls is the call policy; its Concurrency defaults to Concurrency,
	// and its OnRetry to Events.Retry.
	Calls CallPolicy
	// CallTimeout and IdleTimeout are ModelOptions'.
	CallTimeout, IdleTimeout time.Duration
}

// Events are what an ask reports as it goes. Every field is optional.
// Progress, Retry and Call are called from several goroutines at once.
type Events struct {
	// Start is called once, when the provider is chosen and before any
	// model is called.
	Start func(Start)
	// Progress reports phases and subtasks.
	Progress func(orchestrate.Event)
	// Retry reports a failed attempt that will be retried.
	Retry func(attempt int, wait time.Duration, err error)
	// Text receives the synthesis as it is written (with Stream), and
	// Restart voids the text passed so far when a retried synthesis
	// starts again.
	Text    func(delta string)
	Restart func()
	// Call is told of every model call that answered, once per call
	// however many attempts it took.
	Call func(req *llm.Request, resp *llm.Response)
	// Warning receives what the run goes on despite: a skill with
	// problems, a window the server cannot hold, a trace not exported.
	Warning func(msg string)
}

// Start is what an ask is about to do.
type Start struct {
	DryRun   bool
	Provider string // "" in a dry run
	Model    string
	// NoProvider is why a request with DryRunWithoutProvider runs as a
	// dry run; nil otherwise.
	NoProvider error
}

// Result is a finished ask: its record, priced, and where it was saved.
type Result struct {
	Record *orchestrate.Record
	// Path is the saved record's path; "" when it was not saved.
	Path string
	// SaveErr says why the record could not be saved, IndexErr why it is
	// not in the run history; the run itself is not failed by either.
	SaveErr, IndexErr error
}

// Ask answers a task over documents as `baton ask` does: the provider
// from the request or the environment, inside baton's retry policy,
// limits and timeouts (Stack); the window rules; the record priced,
// saved and added to the run history; a trace when an OTLP endpoint is
// set. It returns a result whenever a run started, also with an error,
// so nothing paid for is lost: orchestrate.ErrPartial for an answer with
// gaps, the context's error when cancelled. A nil result comes with an
// error about the request or the setup, before anything was paid for.
func Ask(ctx context.Context, req AskRequest, opts ...Option) (*Result, error) {
	o := options{getenv: os.Getenv}
	for _, opt := range opts {
		opt(&o)
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	flush, err := o.setupTracing(ctx)
	if err != nil {
		return nil, err
	}
	defer flush()
	cfg, prices, err := o.prepare(req)
	if err != nil {
		return nil, err
	}
	closeEngine, err := o.attachModel(ctx, req, cfg)
	if err != nil {
		return nil, err
	}
	defer closeEngine()
	cfg.Counter = tokens.ForModel(cfg.ModelName)
	cfg.Span = telemetry.Spans(o.tracer)
	actx, endAsk := telemetry.StartAsk(ctx, o.tracer, cfg.Provider, cfg.ModelName)
	rec, runErr := orchestrate.Ask(actx, *cfg)
	endAsk(rec, runErr)
	if rec == nil {
		return nil, runErr
	}
	rec.PriceWith(prices)
	res := &Result{Record: rec}
	if !req.NoSave {
		o.record(req, res)
	}
	return res, runErr
}

// prepare reads the documents, the prices and the skills into the run's
// configuration, before anything is paid for.
func (o *options) prepare(req AskRequest) (*orchestrate.Config, *pricing.Table, error) {
	docs := req.Context
	if docs == nil {
		var err error
		if docs, err = document.Load(req.Documents, req.Stdin); err != nil {
			return nil, nil, err
		}
	}
	path := req.Prices
	if path == "" && !req.BuiltinPrices {
		path = pricing.DefaultPath(o.getenv)
	}
	prices, err := pricing.Load(path)
	if err != nil {
		return nil, nil, err
	}
	lib := req.Skills
	if lib == nil {
		lib = skill.Builtins()
	}
	for _, dir := range req.SkillDirs {
		problems, err := lib.AddDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("skills %s: %w", dir, err)
		}
		for _, p := range problems {
			o.warn(p.String())
		}
	}
	cfg := &orchestrate.Config{
		Task: req.Task, Context: docs.Text, Parts: docs.Parts,
		Planner: req.Planner, Skills: lib,
		DryRun: req.DryRun, FailFast: req.FailFast, Stream: req.Stream,
		Concurrency: req.Concurrency, MaxSubtasks: req.MaxSubtasks,
		SubagentMax: req.SubagentMaxTokens, MaxFallbackTokens: req.MaxFallbackTokens,
		Window: req.Window, Temperature: req.Temperature,
		Progress: o.events.Progress, OnText: o.events.Text, OnRestart: o.events.Restart,
	}
	for _, s := range docs.Sources {
		cfg.Sources = append(cfg.Sources, s.Name)
	}
	if cfg.Planner == "" {
		cfg.Planner = orchestrate.PlannerAuto
	}
	return cfg, prices, nil
}

// attachModel resolves the provider (unless the run is a dry run), sets
// the window it runs with, and the engine the sub-agent calls go to. It
// returns what closes the engine.
func (o *options) attachModel(ctx context.Context, req AskRequest, cfg *orchestrate.Config) (func(), error) {
	start := Start{DryRun: true}
	done := func() {}
	if !req.DryRun {
		m, name, model, err := o.model(ctx, req)
		switch {
		case errors.Is(err, llm.ErrNoProvider) && req.DryRunWithoutProvider && req.Provider == "":
			start.NoProvider = err
		case err != nil:
			return nil, err
		default:
			cfg.Provider, cfg.ModelName, cfg.PlannerModel = name, model.Model, req.PlannerModel
			cfg.Model, cfg.Redactor = telemetry.Model(m, o.tracer, name, telemetry.CaptureContent(o.getenv)), model.Redactor
			if model.Window > 0 {
				// The server runs every request with this window
				// (Ollama's num_ctx), so it is the one to check.
				if req.Window > model.Window {
					o.warn(fmt.Sprintf("--window %d is more than %s supports; using its %d tokens", req.Window, model.Model, model.Window))
				}
				cfg.Window = model.Window
			}
			if o.events.Call != nil {
				cfg.Model = callReporter{m: cfg.Model, call: o.events.Call}
			}
			start = Start{Provider: name, Model: model.Model}
		}
	}
	if cfg.Model == nil && req.Model != "" {
		// A dry run names no provider, but a model named still decides
		// the counter and the window the estimate is checked against.
		cfg.ModelName, cfg.PlannerModel = req.Model, req.PlannerModel
	}
	if o.engine != nil && cfg.Model != nil {
		eng, docs, closeEngine, err := o.engine(ctx, cfg.Model)
		if err != nil {
			return nil, err
		}
		cfg.Engine, cfg.Documents, done = eng, docs, closeEngine
	}
	if o.events.Start != nil {
		o.events.Start(start)
	}
	return done, nil
}

// callReporter tells Events.Call of every call that answered. It wraps
// the whole retrying model, so one report is one call.
type callReporter struct {
	m    llm.Model
	call func(*llm.Request, *llm.Response)
}

func (c callReporter) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := c.m.Generate(ctx, req)
	if resp != nil {
		c.call(req, resp)
	}
	return resp, err
}

// Validate checks the request's choices; its error names the field.
func (r AskRequest) Validate() error {
	switch {
	case strings.TrimSpace(r.Task) == "":
		return &RequestError{Field: "task", Rule: "is empty"}
	case len(r.Documents) == 0 && r.Context == nil:
		return &RequestError{Field: "documents", Rule: "are missing: give at least one file or folder"}
	case r.Planner != "" && !orchestrate.ValidPlanner(r.Planner):
		return &RequestError{Field: "planner", Rule: fmt.Sprintf("must be auto, full, llm, outline or retrieval, not %q", r.Planner)}
	case r.Window < 0:
		return &RequestError{Field: "window", Rule: "must be 0 (known windows) or a number of tokens"}
	case r.Concurrency < 0:
		return &RequestError{Field: "concurrency", Rule: "must be at least 1 (0 for the default)"}
	case r.MaxSubtasks < 0:
		return &RequestError{Field: "max_subtasks", Rule: "must be at least 1 (0 for the default)"}
	case r.MaxFallbackTokens < -1:
		return &RequestError{Field: "max_fallback_tokens", Rule: "must be 0 (one single call's worth), -1 (no ceiling) or a number of tokens"}
	case r.Calls.MaxAttempts < 0:
		return &RequestError{Field: "max_attempts", Rule: "must be at least 1 (0 for the default)"}
	}
	return nil
}

// RequestError is a choice of an AskRequest that cannot be run. Field is
// the choice's JSON name (MCP's), which `baton ask` spells as its flag.
type RequestError struct {
	Field, Rule string
}

func (e *RequestError) Error() string { return e.Field + " " + e.Rule }

// tracer is the option's, else one from the environment (an OTLP
// endpoint), flushed when the ask ends.
func (o *options) setupTracing(ctx context.Context) (func(), error) {
	if o.tracer != nil {
		return func() {}, nil
	}
	shutdown, tracer, err := telemetry.Setup(ctx, o.getenv)
	if err != nil {
		return nil, err
	}
	o.tracer = tracer
	return func() {
		// Bounded, so that a collector that is down cannot hold the exit.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			o.warn(err.Error())
		}
	}, nil
}

func (o *options) warn(msg string) {
	if o.events.Warning != nil {
		o.events.Warning(msg)
	}
}
