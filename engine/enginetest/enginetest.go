// Package enginetest is the contract every engine passes: the same tests,
// run against internal/localengine and engine/dbosengine, of what baton relies on —
// a recorded step is never run again, a failed one is, a fan-out keeps its
// order and bound and gives each item its own error, and an item cut short
// (by its caller, or by its engine closing as a process would die)
// continues from its last recorded step in a new engine on the same store.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
)

// Backend is how the contract makes engines. A store is where durable
// records live (a folder, a database URL); two engines opened on the same
// store, one after the other, are two lives of the same process.
type Backend struct {
	NewStore func(t *testing.T) string
	// Open opens an engine on store with tasks whose FanOut runs at most
	// concurrency items at once. The test closes it.
	Open func(t *testing.T, store string, tasks engine.Tasks, concurrency int) engine.Engine
	// Volatile says the records end with the engine (local without a
	// folder): the test of surviving the process is left out.
	Volatile bool
}

// guard bounds every wait, so that a hang fails instead of stalling.
const guard = 90 * time.Second

// Run runs the contract.
func Run(t *testing.T, b Backend) {
	t.Run("RecordedStepsAreNotRunAgain", func(t *testing.T) { recorded(t, b) })
	t.Run("FailedStepRunsAgain", func(t *testing.T) { failedStep(t, b) })
	t.Run("RepeatedKeyAndFailedTask", func(t *testing.T) { repeatedKey(t, b) })
	t.Run("CancelledCallerContinues", func(t *testing.T) { cancelled(t, b) })
	t.Run("SurvivesTheProcess", func(t *testing.T) {
		if b.Volatile {
			t.Skip("this backend keeps its records only for the engine's life")
		}
		survives(t, b)
	})
	t.Run("FanOut", func(t *testing.T) { fanOut(t, b) })
	t.Run("FanOutCancelledThenCollected", func(t *testing.T) { fanOutCancelled(t, b) })
}

// counts counts executions by name.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
	return c.n[name]
}

func (c *counts) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func (c *counts) expect(t *testing.T, want map[string]int) {
	t.Helper()
	for name, n := range want {
		if got := c.get(name); got != n {
			t.Errorf("%s ran %d times, want %d", name, got, n)
		}
	}
}

func bg(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// step is engine.Step over strings, counting fn's runs under name.
func step(ctx context.Context, c *counts, key string, fn func(context.Context) (string, error)) (string, error) {
	out, err := engine.Step(ctx, key, func(ctx context.Context) ([]byte, error) {
		c.add(key)
		s, err := fn(ctx)
		return []byte(s), err
	})
	return string(out), err
}

// twoSteps is a task of two steps; hook runs inside the second before it
// answers.
func twoSteps(c *counts, hook func(ctx context.Context, n int) error) engine.Task {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		a, err := step(ctx, c, "first", func(context.Context) (string, error) { return "a(" + string(in) + ")", nil })
		if err != nil {
			return nil, err
		}
		b, err := step(ctx, c, "second", func(ctx context.Context) (string, error) {
			if hook != nil {
				if err := hook(ctx, c.get("second")); err != nil {
					return "", err
				}
			}
			return "b(" + a + ")", nil
		})
		return []byte(b), err
	}
}

func recorded(t *testing.T, b Backend) {
	c := &counts{}
	e := b.Open(t, b.NewStore(t), engine.Tasks{"two": twoSteps(c, nil)}, 1)
	ctx := bg(t)
	for i, in := range []string{"x", "a different input, which a recorded item ignores"} {
		out, err := e.Run(ctx, engine.Item{ID: "item-1", Task: "two", Input: []byte(in)})
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if string(out) != "b(a(x))" {
			t.Fatalf("run %d: %q, want b(a(x))", i+1, out)
		}
	}
	c.expect(t, map[string]int{"first": 1, "second": 1})
	if _, err := e.Run(ctx, engine.Item{ID: "item-2", Task: "missing"}); !errors.Is(err, engine.ErrUnknownTask) {
		t.Errorf("unknown task: %v, want ErrUnknownTask", err)
	}
}

func failedStep(t *testing.T, b Backend) {
	c := &counts{}
	boom := func(_ context.Context, n int) error {
		if n == 1 {
			return errors.New("the provider answered 500")
		}
		return nil
	}
	e := b.Open(t, b.NewStore(t), engine.Tasks{"two": twoSteps(c, boom)}, 1)
	ctx := bg(t)
	it := engine.Item{ID: "flaky", Task: "two", Input: []byte("x")}
	if _, err := e.Run(ctx, it); err == nil || !strings.Contains(err.Error(), "the provider answered 500") {
		t.Fatalf("first run: %v, want the step's error", err)
	}
	out, err := e.Run(ctx, it)
	if err != nil || string(out) != "b(a(x))" {
		t.Fatalf("second run: %q, %v", out, err)
	}
	c.expect(t, map[string]int{"first": 1, "second": 2})
}

// repeatedKey: the same key asked twice in one run is two steps, answered
// in order on replay; a task that fails after its steps runs again with
// both answered from the record.
func repeatedKey(t *testing.T, b Backend) {
	c := &counts{}
	var runs atomic.Int32
	task := func(ctx context.Context, _ []byte) ([]byte, error) {
		var got []string
		for range 2 {
			s, err := step(ctx, c, "same", func(context.Context) (string, error) { return fmt.Sprint(c.get("same")), nil })
			if err != nil {
				return nil, err
			}
			got = append(got, s)
		}
		if runs.Add(1) == 1 {
			return nil, errors.New("the task failed after its steps")
		}
		return []byte(strings.Join(got, ",")), nil
	}
	e := b.Open(t, b.NewStore(t), engine.Tasks{"rep": task}, 1)
	ctx := bg(t)
	it := engine.Item{ID: "rep", Task: "rep"}
	if _, err := e.Run(ctx, it); err == nil || !strings.Contains(err.Error(), "failed after its steps") {
		t.Fatalf("first run: %v", err)
	}
	out, err := e.Run(ctx, it)
	if err != nil || string(out) != "1,2" {
		t.Fatalf("second run: %q, %v; want 1,2 from the record", out, err)
	}
	c.expect(t, map[string]int{"same": 2})
}

// blocking returns a hook that, while block is set, signals in and waits
// for its context to end, as a step cut short would.
func blocking(block *atomic.Bool, in chan<- struct{}) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error {
		if !block.Load() {
			return nil
		}
		in <- struct{}{}
		<-ctx.Done()
		return context.Cause(ctx)
	}
}

func waitIn(t *testing.T, in <-chan struct{}) {
	t.Helper()
	select {
	case <-in:
	case <-time.After(guard):
		t.Fatal("the second step never started")
	}
}

func cancelled(t *testing.T, b Backend) {
	c := &counts{}
	var block atomic.Bool
	block.Store(true)
	in := make(chan struct{}, 1)
	e := b.Open(t, b.NewStore(t), engine.Tasks{"two": twoSteps(c, blocking(&block, in))}, 1)
	it := engine.Item{ID: "cut", Task: "two", Input: []byte("x")}
	ctx, cancel := context.WithCancel(bg(t))
	done := make(chan error, 1)
	go func() { _, err := e.Run(ctx, it); done <- err }()
	waitIn(t, in)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled run returned no error")
		}
	case <-time.After(guard):
		t.Fatal("Run did not return after its context was cancelled")
	}
	block.Store(false)
	out, err := e.Run(bg(t), it)
	if err != nil || string(out) != "b(a(x))" {
		t.Fatalf("run after the cancel: %q, %v", out, err)
	}
	c.expect(t, map[string]int{"first": 1, "second": 2})
}

func survives(t *testing.T, b Backend) {
	c := &counts{}
	var block atomic.Bool
	block.Store(true)
	in := make(chan struct{}, 1)
	tasks := engine.Tasks{"two": twoSteps(c, blocking(&block, in))}
	store := b.NewStore(t)
	e1 := b.Open(t, store, tasks, 1)
	it := engine.Item{ID: "crash", Task: "two", Input: []byte("x")}
	done := make(chan error, 1)
	go func() { _, err := e1.Run(bg(t), it); done <- err }()
	waitIn(t, in)
	if err := e1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a run cut short by Close returned no error")
		}
	case <-time.After(guard):
		t.Fatal("Run did not return after Close")
	}
	block.Store(false)
	e2 := b.Open(t, store, tasks, 1)
	out, err := e2.Run(bg(t), it)
	if err != nil || string(out) != "b(a(x))" {
		t.Fatalf("run in the second engine: %q, %v", out, err)
	}
	c.expect(t, map[string]int{"first": 1, "second": 2})
}

func fanOut(t *testing.T, b Backend) {
	const limit, n = 3, 10
	c := &counts{}
	var inflight, peak atomic.Int32
	work := func(ctx context.Context, in []byte) ([]byte, error) {
		s, err := step(ctx, c, "work", func(context.Context) (string, error) {
			now := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
			return string(in) + "!", nil
		})
		return []byte(s), err
	}
	fail := func(ctx context.Context, in []byte) ([]byte, error) {
		c.add("fail")
		return nil, fmt.Errorf("item %s fails", in)
	}
	e := b.Open(t, b.NewStore(t), engine.Tasks{"work": work, "fail": fail}, limit)
	items := make([]engine.Item, n)
	for i := range items {
		items[i] = engine.Item{ID: fmt.Sprintf("fan-%d", i), Task: "work", Input: []byte(fmt.Sprint(i))}
	}
	items[4].Task = "fail"
	items[7].Task = "nope"
	check := func(round int, res []engine.Result) {
		t.Helper()
		if len(res) != n {
			t.Fatalf("round %d: %d results for %d items", round, len(res), n)
		}
		for i, r := range res {
			switch i {
			case 4:
				if r.Err == nil || !strings.Contains(r.Err.Error(), "item 4 fails") {
					t.Errorf("round %d item 4: %v, want its own error", round, r.Err)
				}
			case 7:
				if !errors.Is(r.Err, engine.ErrUnknownTask) {
					t.Errorf("round %d item 7: %v, want ErrUnknownTask", round, r.Err)
				}
			default:
				if r.Err != nil || string(r.Output) != fmt.Sprint(i)+"!" {
					t.Errorf("round %d item %d: %q, %v", round, i, r.Output, r.Err)
				}
			}
		}
	}
	check(1, e.FanOut(bg(t), items))
	if p := peak.Load(); p > limit || p < 2 {
		t.Errorf("at most %d items ran at once, want between 2 and the limit %d", p, limit)
	}
	c.expect(t, map[string]int{"work": n - 2, "fail": 1})
	// Again with the same IDs: the recorded items are answered, the failed
	// one runs again.
	check(2, e.FanOut(bg(t), items))
	c.expect(t, map[string]int{"work": n - 2, "fail": 2})
}

// fanOutCancelled: a FanOut whose caller gives up while its items are in
// their second step returns an error for each; a later FanOut of the same
// items returns every output, and no first step runs twice.
func fanOutCancelled(t *testing.T, b Backend) {
	const n = 3
	c := &counts{}
	var block atomic.Bool
	block.Store(true)
	in := make(chan struct{}, n)
	hook := func(ctx context.Context, _ int) error {
		if !block.Load() {
			return nil
		}
		in <- struct{}{}
		// Held until the test lets go, or the engine cuts it short.
		for block.Load() && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		return context.Cause(ctx)
	}
	tasks := engine.Tasks{"two": func(ctx context.Context, in []byte) ([]byte, error) {
		a, err := step(ctx, c, "first-"+string(in), func(context.Context) (string, error) { return "a" + string(in), nil })
		if err != nil {
			return nil, err
		}
		out, err := step(ctx, c, "second-"+string(in), func(ctx context.Context) (string, error) {
			return "b" + a, hook(ctx, 0)
		})
		return []byte(out), err
	}}
	e := b.Open(t, b.NewStore(t), tasks, n)
	items := make([]engine.Item, n)
	for i := range items {
		items[i] = engine.Item{ID: fmt.Sprint("held-", i), Task: "two", Input: []byte(fmt.Sprint(i))}
	}
	ctx, cancel := context.WithCancel(bg(t))
	res := make(chan []engine.Result, 1)
	go func() { res <- e.FanOut(ctx, items) }()
	for range n {
		waitIn(t, in)
	}
	cancel()
	select {
	case r := <-res:
		for i, x := range r {
			if x.Err == nil {
				t.Errorf("item %d: no error from a FanOut given up", i)
			}
		}
	case <-time.After(guard):
		t.Fatal("FanOut did not return after its context was cancelled")
	}
	block.Store(false)
	for i, x := range e.FanOut(bg(t), items) {
		if x.Err != nil || string(x.Output) != fmt.Sprintf("ba%d", i) {
			t.Errorf("item %d collected: %q, %v", i, x.Output, x.Err)
		}
	}
	for i := range n {
		c.expect(t, map[string]int{fmt.Sprint("first-", i): 1})
	}
}
