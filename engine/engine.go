// Package engine is the seam between baton's durable units of work and what
// runs them. baton needs three things of an engine: a step whose result is
// recorded before it is used (a model call keyed by its request's hash, a
// tool call's effects), a fan-out of many items at a bounded concurrency
// whose results come back in order, and a workflow of steps that survives
// the process that started it.
//
// Work is named, not passed as closures: a Task is registered under a name
// in every baton process, and an Item names its task and carries its input
// as bytes (hashes and slice coordinates, never whole documents), so that a
// worker on another machine can run an item the coordinator enqueued.
//
// baton's default needs no engine: `baton ask` sends its sub-agent calls
// from goroutines of its own process (orchestrate's dispatch), and `baton
// run` journals each step's model and tool calls in the run's folder, which
// `baton resume` replays. engine/dbosengine implements this interface for
// work that must outlive the process or spread over machines: items are
// DBOS workflows over PostgreSQL, taken by `baton worker` processes.
// internal/localengine is an in-process implementation kept for tests of
// the seam; engine/enginetest is the contract both pass.
package engine

import (
	"context"
	"errors"
)

// Task is a unit of durable work: it reads its input and returns its
// output. Within it, every call that must not be repeated (a model call, a
// tool call with effects) goes through Step. A Task must be deterministic
// apart from its Steps: run again after a crash, it must ask for the same
// steps in the same order, and each Step is answered from the record.
// Its Steps are called one at a time; concurrency belongs to FanOut.
type Task func(ctx context.Context, input []byte) ([]byte, error)

// Tasks is the registry every process of one deployment shares: the same
// names for the same functions.
type Tasks map[string]Task

// Item is one durable unit: a task, its input, and the ID it is recorded
// under. Once an ID has succeeded, running it again returns the recorded
// output without running the task; an ID that failed runs again from its
// last recorded step.
type Item struct {
	ID    string
	Task  string
	Input []byte
}

// Result is one item's outcome.
type Result struct {
	Output []byte
	Err    error
}

// Engine runs items durably.
type Engine interface {
	// Run runs one item in this process and waits for it.
	Run(ctx context.Context, it Item) ([]byte, error)
	// FanOut runs the items at the engine's concurrency, wherever the
	// engine runs work, and returns their results in the items' order;
	// one item's failure is its own Result.Err, not the others'. A
	// cancelled ctx stops the waiting: items not finished get ctx's error.
	FanOut(ctx context.Context, items []Item) []Result
	// Close stops the engine. Items still running are cut short and
	// stay recorded as unfinished, to be continued by a later Run or
	// FanOut of the same IDs (or, with dbos, by a worker).
	Close() error
}

// Errors callers branch on.
var (
	// ErrNoWorkflow is returned by Step called outside a Task run by an
	// engine: there is no record to keep the result in.
	ErrNoWorkflow = errors.New("engine: step outside a task run by an engine")
	// ErrUnknownTask is an item whose task is not registered.
	ErrUnknownTask = errors.New("engine: unknown task")
	// ErrClosed is returned for work asked of a closed engine.
	ErrClosed = errors.New("engine: closed")
)

// Stepper records the steps of one running item. Engines put one in the
// context they give a Task.
type Stepper interface {
	Step(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error)
}

type stepperKey struct{}

// WithStepper returns ctx carrying s, for an engine about to call a Task.
func WithStepper(ctx context.Context, s Stepper) context.Context {
	return context.WithValue(ctx, stepperKey{}, s)
}

// Step runs fn as a recorded step of the item ctx belongs to: the first
// time, fn runs and its output is recorded before it is returned; when the
// item runs again (after a crash, or a failure later in the task), the
// recorded output is returned and fn is not called. key names the step,
// typically the hash of the request fn sends. A failed fn is not kept as
// the step's answer: when an item that failed is run again, its failed step
// runs again.
func Step(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	s, ok := ctx.Value(stepperKey{}).(Stepper)
	if !ok {
		return nil, ErrNoWorkflow
	}
	return s.Step(ctx, key, fn)
}
