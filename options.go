package baton

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/provider"
	"github.com/baton-dev/baton/orchestrate"
)

// Option changes how Ask or Run runs; none is needed.
type Option func(*options)

type options struct {
	getenv  func(string) string
	events  Events
	tracer  trace.Tracer
	client  llm.Model // a provider client the caller built
	clientP string    // its provider's name
	save    func(*orchestrate.Record) (string, error)
	index   func(*orchestrate.Record, string) error
	engine  EngineFunc
	// run and runIndex are Run's events and run history.
	run      RunEvents
	runIndex func(runDir string) error
}

// EngineFunc opens the engine the sub-agent calls run on, given the model
// they call, and returns what closes it.
type EngineFunc func(ctx context.Context, m llm.Model) (engine.Engine, orchestrate.Documents, func(), error)

// WithEnv reads the environment through getenv instead of os.Getenv: the
// provider's keys and endpoints, the prices file, the OTLP endpoint.
func WithEnv(getenv func(string) string) Option { return func(o *options) { o.getenv = getenv } }

// WithEvents reports the run's progress as it goes.
func WithEvents(e Events) Option { return func(o *options) { o.events = e } }

// WithTracer traces the run with tracer instead of the one the
// environment sets up (OTEL_EXPORTER_OTLP_ENDPOINT).
func WithTracer(t trace.Tracer) Option { return func(o *options) { o.tracer = t } }

// WithClient uses a provider client the caller built (anthropic.New,
// openai.New) instead of resolving one from the environment. Ask still
// wraps it in baton's retry policy and limits (Stack); its timeouts are
// its HTTP client's. name is the provider's name for the record.
func WithClient(p llm.Model, name string) Option {
	return func(o *options) { o.client, o.clientP = p, name }
}

// WithRecorder saves the record with save (which returns where) and adds
// it to the run history with index, instead of writing it under the
// request's RunsDir and indexing it in the user's history. A nil function
// keeps that step's default; AskRequest.NoSave skips both.
func WithRecorder(save func(*orchestrate.Record) (string, error), index func(rec *orchestrate.Record, path string) error) Option {
	return func(o *options) { o.save, o.index = save, index }
}

// WithEngine runs the sub-agent calls on the engine open returns (the
// dbos engine's coordinator) instead of in this process.
func WithEngine(open EngineFunc) Option { return func(o *options) { o.engine = open } }

// model is the run's model: the caller's client or the environment's
// provider, inside Stack.
func (o *options) model(ctx context.Context, req AskRequest) (llm.Model, string, *provider.Selection, error) {
	pol := req.Calls
	if pol.Concurrency == 0 {
		pol.Concurrency = req.Concurrency
		if pol.Concurrency == 0 {
			pol.Concurrency = orchestrate.DefaultConcurrency
		}
	}
	if pol.OnRetry == nil {
		pol.OnRetry = o.events.Retry
	}
	m, sel, err := o.resolve(ctx, ModelOptions{Provider: req.Provider, Model: req.Model, BaseURL: req.BaseURL,
		Window: req.Window, CallTimeout: req.CallTimeout, IdleTimeout: req.IdleTimeout, Getenv: o.getenv}, pol)
	if err != nil {
		return nil, "", nil, err
	}
	return m, sel.Provider, sel, nil
}

// resolve is the caller's client or the environment's provider, inside
// Stack: the one model stack of an ask and a run.
func (o *options) resolve(ctx context.Context, mo ModelOptions, pol CallPolicy) (llm.Model, *provider.Selection, error) {
	if o.client != nil {
		return Stack(o.client, pol), &provider.Selection{Provider: o.clientP, Model: mo.Model, LLM: o.client}, nil
	}
	return NewModel(ctx, mo, pol)
}

// save writes the record and adds it to the run history; a failure of
// either is the result's, not the run's.
func (o *options) record(req AskRequest, res *Result) {
	save, index := o.save, o.index
	if save == nil {
		dir := req.RunsDir
		if dir == "" {
			dir = RunsDir
		}
		save = func(rec *orchestrate.Record) (string, error) {
			// The default runs folder lies in .baton, which ignores
			// itself for git.
			_ = batondir.EnsureFor(dir)
			return rec.Save(dir)
		}
	}
	if index == nil {
		index = indexRecord
	}
	res.Path, res.SaveErr = save(res.Record)
	if res.SaveErr != nil || res.Path == "" {
		return
	}
	res.IndexErr = index(res.Record, res.Path)
}

// indexRecord adds a saved record to the user's run history, rebuilding
// the history once when it is damaged.
func indexRecord(rec *orchestrate.Record, path string) error {
	d, err := history.Open("")
	if err != nil {
		return err
	}
	err = d.IndexRecord(rec, path)
	d.Close()
	if !errors.Is(err, history.ErrDamaged) {
		return err
	}
	d, rerr := history.Repair("")
	if rerr != nil {
		return fmt.Errorf("%w; and it could not be rebuilt: %v", err, rerr)
	}
	defer d.Close()
	return d.IndexRecord(rec, path)
}

func getenvOr(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}
