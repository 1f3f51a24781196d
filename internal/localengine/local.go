// Package localengine is the engine that runs everything in this process: a
// fan-out is a bounded set of goroutines, and an item's steps are recorded
// in a journal file of its own under a folder (or in memory, for the
// engine's life, when no folder is given). baton's commands do not use it
// (their default needs no engine; see package engine): it is the seam's
// in-process implementation, which the contract and the tests of the
// distributed path run against. What survives a crash is what the folder holds:
// a later Run of the same item ID answers its recorded steps from the
// journal and runs only what was not recorded.
package localengine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/baton-dev/baton/engine"
)

// Options configure an Engine.
type Options struct {
	// Dir holds one journal per item. Empty keeps the journals in memory,
	// so that nothing outlives the engine.
	Dir string
	// Concurrency is how many items of a FanOut run at once (at least 1).
	Concurrency int
}

// Engine is the in-process engine.
type Engine struct {
	tasks engine.Tasks
	opt   Options

	// ctx ends when the engine closes, cutting short the items running.
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	locks  map[string]*sync.Mutex // one per item ID, so that one ID runs once at a time
	mem    map[string]*journal    // the journals, when Dir is empty
}

var _ engine.Engine = (*Engine)(nil)

// New returns an engine running tasks. With opt.Dir set, the folder is
// created if it does not exist.
func New(tasks engine.Tasks, opt Options) (*Engine, error) {
	if opt.Concurrency < 1 {
		opt.Concurrency = 1
	}
	if opt.Dir != "" {
		if err := os.MkdirAll(opt.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("engine journal folder: %w", err)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Engine{tasks: tasks, opt: opt, ctx: ctx, cancel: cancel,
		locks: map[string]*sync.Mutex{}, mem: map[string]*journal{}}, nil
}

// Run runs it in this process, answering its recorded steps from its
// journal, and records its output once it succeeds.
func (e *Engine) Run(ctx context.Context, it engine.Item) ([]byte, error) {
	task, ok := e.tasks[it.Task]
	if !ok {
		return nil, fmt.Errorf("item %q: %w %q", it.ID, engine.ErrUnknownTask, it.Task)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, fmt.Errorf("item %q: %w", it.ID, engine.ErrClosed)
	}
	e.wg.Add(1)
	l := e.locks[it.ID]
	if l == nil {
		l = &sync.Mutex{}
		e.locks[it.ID] = l
	}
	e.mu.Unlock()
	defer e.wg.Done()

	// The item is cut short by the caller's ctx and by Close.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(e.ctx, func() { cancel(engine.ErrClosed) })
	defer stop()

	l.Lock()
	defer l.Unlock()
	j, unlock, err := e.open(rctx, it.ID)
	if err != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	defer unlock()
	if out, ok := j.output(); ok {
		return out, nil
	}
	out, err := task(engine.WithStepper(rctx, &stepper{j: j, next: map[string]int{}}), it.Input)
	if err != nil {
		if cause := context.Cause(rctx); cause != nil && rctx.Err() != nil {
			return nil, fmt.Errorf("item %q: %w (%w)", it.ID, err, cause)
		}
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	if err := j.finish(out); err != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	return out, nil
}

// open returns the item's journal and what releases it: in memory, the
// engine's map; on disk, the file, held under a file lock so that two
// processes sharing the folder never run the same item at once.
func (e *Engine) open(ctx context.Context, id string) (*journal, func(), error) {
	if e.opt.Dir == "" {
		e.mu.Lock()
		defer e.mu.Unlock()
		j := e.mem[id]
		if j == nil {
			j = newMemJournal()
			e.mem[id] = j
		}
		return j, func() {}, nil
	}
	path := journalPath(e.opt.Dir, id)
	fl := flock.New(path + ".lock")
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, nil, fmt.Errorf("lock journal: %w", err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("lock journal %s: not taken", path)
	}
	j, err := openJournal(path)
	if err != nil {
		fl.Unlock()
		return nil, nil, err
	}
	return j, func() { j.close(); fl.Unlock() }, nil
}

// FanOut runs the items, at most Concurrency at a time, each as Run would.
// An item starts only once a slot is free, so the goroutines alive at any
// time are those running.
func (e *Engine) FanOut(ctx context.Context, items []engine.Item) []engine.Result {
	res := make([]engine.Result, len(items))
	slots := make(chan struct{}, e.opt.Concurrency)
	var wg sync.WaitGroup
	for i, it := range items {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			res[i].Err = fmt.Errorf("item %q: not started: %w", it.ID, context.Cause(ctx))
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			res[i].Output, res[i].Err = e.Run(ctx, it)
		}()
	}
	wg.Wait()
	return res
}

// Close cuts short the items running and waits for them to return. Their
// recorded steps stay in their journals.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel(engine.ErrClosed)
	e.wg.Wait()
	return nil
}

// stepper answers one run of an item's steps: the n-th Step with a key gets
// the key's n-th recorded output, and a Step past what is recorded runs and
// is appended.
type stepper struct {
	j    *journal
	next map[string]int
}

func (s *stepper) Step(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	n := s.next[key]
	if out, ok := s.j.step(key, n); ok {
		s.next[key] = n + 1
		return out, nil
	}
	out, err := fn(ctx)
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", key, err)
	}
	if err := s.j.record(key, out); err != nil {
		return nil, fmt.Errorf("step %q: %w", key, err)
	}
	s.next[key] = n + 1
	return out, nil
}
