package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/workflow"
)

// Steps as durable engine items.
//
// With Config.Engine, each skill step runs as one engine item whose ID is
// the run's ID and the step's number, so any process that resumes the run
// computes the same ID. Within the item, every model call of the step's own
// session is an engine.Step keyed by the hash of its request, and every
// tool call of the step is an engine.Step keyed as the journal keys it
// (toolKey): on recovery the engine answers them from its record, in
// order, and neither the call is paid nor the tool run again. The item
// covers the step up to its step_end in the run log, so an item the engine
// records as finished is a step the run log records as finished.
//
// What runs inside a recorded tool call (a spawn_subagents call's
// sub-agents, concurrent) and a reset's request for a ledger entry are not
// engine steps: their order is not fixed, or a resumed step skips them, and
// an engine answers steps by position. They go through the step's journal,
// as in a local run, which answers them by request hash. The journal also
// keeps what is the workspace's own: the step's first context, its resets,
// the provider's refusals and the note that the step's end is being
// written to state.yaml.
//
// The workspace stays on the disk of the process that runs the run: the
// item runs in that process (Engine.Run), and "any worker" is any process
// that resumes the run on that workspace.

// StepTask is the name a run's step items are registered under.
const StepTask = "baton.run.step"

// EngineOpener opens the engine a run's steps run on, for run runID, with
// tasks (StepTask) registered. The runner closes it when the run returns.
type EngineOpener func(ctx context.Context, runID string, tasks engine.Tasks) (engine.Engine, error)

// StepItemID is the engine item ID of step seq of run runID.
func StepItemID(runID string, seq int) string {
	return fmt.Sprintf("%s.step-%d", runID, seq)
}

// engineName is the name current.json records for the run's engine: ""
// for the journals alone.
func (r *runner) engineName() string {
	if r.cfg.Engine == nil {
		return ""
	}
	if r.cfg.EngineName == "" {
		return "durable"
	}
	return r.cfg.EngineName
}

func orLocal(name string) string {
	if name == "" {
		return "local"
	}
	return name
}

// openEngine opens Config.Engine for the run, if set.
func (r *runner) openEngine(ctx context.Context) error {
	if r.cfg.Engine == nil {
		return nil
	}
	r.host = newStepHost()
	eng, err := r.cfg.Engine(ctx, r.id, engine.Tasks{StepTask: r.host.task})
	if err != nil {
		return fmt.Errorf("run %s: %w", r.id, err)
	}
	r.eng = eng
	return nil
}

func (r *runner) closeEngine() {
	if r.eng == nil {
		return
	}
	if err := r.eng.Close(); err != nil {
		r.warn(err.Error())
	}
}

// stepOutcome is what a step item's body left for the loop.
type stepOutcome struct {
	step workflow.Step
	err  error
}

// runStepItem runs the step as the engine item of its number. The body is
// this process's closure over the step; the engine may start it from Run
// or from its own recovery of the item (a process that died in the step),
// and either way it runs here, once, and the loop waits for it.
func (r *runner) runStepItem(ctx context.Context, sr *stepRun, pos position) (workflow.Step, error) {
	id := StepItemID(r.id, pos.seq)
	var once sync.Once
	started, done := make(chan struct{}), make(chan struct{})
	var out stepOutcome
	body := func(tctx context.Context) ([]byte, error) {
		first := false
		once.Do(func() { first = true })
		if !first {
			// DBOS runs an item once at a time; this is a second
			// execution in the same process (a rewind), after the first
			// ended.
			return nil, fmt.Errorf("step %d: already run by this process", pos.seq)
		}
		close(started)
		defer close(done)
		// The step works under the run's context (its trace, its
		// cancellation), with the item's record for its steps.
		sctx := engine.WithStepper(ctx, forward{tctx})
		out.step, out.err = r.stepBody(sctx, sr, pos)
		if out.err != nil {
			return nil, out.err
		}
		return []byte("ok"), nil
	}
	r.host.offer(id, pos.seq, body)
	_, err := r.eng.Run(ctx, engine.Item{ID: id, Task: StepTask, Input: []byte(id)})
	r.host.withdraw(id)
	select {
	case <-started:
		// The body may have been started by the engine's recovery and
		// outlive Run's wait (ctx ended): it stops with ctx.
		<-done
		return out.step, out.err
	default:
	}
	if err != nil {
		return workflow.Step{}, err
	}
	return workflow.Step{}, fmt.Errorf("step %d: %w", pos.seq, errNotRun)
}

// forward records a step's engine.Steps in the item the engine runs (tctx
// is the task's context, which carries the engine's record), whatever
// context the step works under.
type forward struct{ tctx context.Context }

func (f forward) Step(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	return engine.Step(f.tctx, key, fn)
}

// stepHost hands the engine's step task the closure of the step the loop
// is running: the task runs in this process and finds its step by item ID.
// A task for a step before the one running is one the run has gone past
// (its process died after the step's end was logged): it ends at once.
type stepHost struct {
	mu      sync.Mutex
	bodies  map[string]func(context.Context) ([]byte, error)
	current int
	changed chan struct{}
}

func newStepHost() *stepHost {
	return &stepHost{bodies: map[string]func(context.Context) ([]byte, error){}, changed: make(chan struct{})}
}

func (h *stepHost) offer(id string, seq int, body func(context.Context) ([]byte, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies[id], h.current = body, seq
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *stepHost) withdraw(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.bodies, id)
}

// task is StepTask: its input is the item's ID.
func (h *stepHost) task(ctx context.Context, input []byte) ([]byte, error) {
	id := string(input)
	seq := -1
	if i := strings.LastIndex(id, ".step-"); i >= 0 {
		seq, _ = strconv.Atoi(id[i+len(".step-"):])
	}
	for {
		h.mu.Lock()
		body, ok := h.bodies[id]
		past := seq >= 0 && seq < h.current
		changed := h.changed
		h.mu.Unlock()
		switch {
		case ok:
			return body(ctx)
		case past:
			return []byte("passed"), nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("step item %s: %w", id, context.Cause(ctx))
		}
	}
}

// inTool marks a context as inside a recorded tool call: what runs there
// is answered by the journal, not by engine steps.
type inToolKey struct{}

func inTool(ctx context.Context) context.Context { return context.WithValue(ctx, inToolKey{}, true) }

// durable says whether a call under ctx is one of the step item's engine
// steps.
func (s *stepRun) durable(ctx context.Context) bool {
	return s.r.eng != nil && ctx.Value(inToolKey{}) == nil
}

// exchange sends req, or answers it from the record: the engine's, for the
// step's own calls of a durable step, else the journal's.
func (s *stepRun) exchange(ctx context.Context, req *llm.Request) (*llm.Response, string, bool, error) {
	if !s.durable(ctx) {
		return s.j.callHashed(ctx, s.r.cfg.Model, req)
	}
	h, err := requestHash(req)
	if err != nil {
		return nil, "", false, err
	}
	sent := false
	var callErr error
	b, err := engine.Step(ctx, "call "+h, func(context.Context) ([]byte, error) {
		sent = true
		resp, err := s.r.cfg.Model.Generate(ctx, req)
		if err != nil {
			// Kept as the model's error, which the loop branches on
			// (a prompt too long, a refusal, an interruption).
			callErr = s.j.refusal(ctx, h, err)
			return nil, callErr
		}
		return json.Marshal(resp)
	})
	if callErr != nil {
		return nil, h, false, callErr
	}
	if err != nil {
		return nil, h, false, fmt.Errorf("model call %s: %w", h[:12], err)
	}
	var resp llm.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, h, false, fmt.Errorf("model call %s: the engine's record does not decode: %w", h[:12], err)
	}
	return &resp, h, !sent, nil
}

// durableTool runs tool call c as an engine step of the step item, or
// answers it from the engine's record with its effects restored.
func (s *stepRun) durableTool(ctx context.Context, env *toolEnv, key string, c llm.ToolCall, part Part, own bool) (toolOutcome, error) {
	ran := false
	var out toolOutcome
	b, err := engine.Step(ctx, "tool "+key, func(context.Context) ([]byte, error) {
		ran = true
		o, rec, err := s.runTool(inTool(ctx), env, c, part, own)
		if err != nil {
			return nil, err
		}
		out = o
		return json.Marshal(rec)
	})
	if err != nil {
		return toolOutcome{}, err
	}
	if ran {
		s.logTool(c, out, !own, false)
		return out, nil
	}
	var rec journalTool
	if err := json.Unmarshal(b, &rec); err != nil {
		return toolOutcome{}, fmt.Errorf("tool %s: the engine's record does not decode: %w", c.Name, err)
	}
	return s.replayTool(ctx, env, c, part, own, rec), nil
}
