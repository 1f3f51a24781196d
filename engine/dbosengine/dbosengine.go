package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-dev/baton/engine"
)

// workflowName is the one DBOS workflow every item runs as: the task is
// named in its input, so that any process with the same Tasks can run any
// item, whatever binary enqueued it.
const workflowName = "baton.task"

// quiet discards DBOS's logs, which are at info on every launch.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// RateLimit is at most Limit item starts per Period, counted across every
// process on the queue.
type RateLimit struct {
	Limit  int
	Period time.Duration
}

// Config configures an Engine.
type Config struct {
	// DatabaseURL is the PostgreSQL URL of the system database. Open
	// creates the database and DBOS's schema if they do not exist
	// (see Migrate).
	DatabaseURL string
	// AppName names the application's records in the database
	// (default "baton").
	AppName string
	// AppVersion is the explicit application version: a process recovers
	// and dequeues only work recorded under its own version, so
	// coordinators and workers that must share work set the same one.
	AppVersion string
	// ExecutorID names this process in the records. A process that
	// restarts with the same ID recovers the work it left unfinished
	// when it launches. Default "local".
	ExecutorID string
	// Queue is the queue FanOut enqueues on (default "baton").
	Queue string
	// WorkerConcurrency is how many items of the queue each process runs
	// at once (at least 1). DBOS keeps it in the queue's row, shared by
	// every process on the queue: the last process to register it sets
	// it for all.
	WorkerConcurrency int
	// GlobalConcurrency, when above 0, bounds the items running at once
	// across all processes.
	GlobalConcurrency int
	// RateLimit, when set, bounds item starts across all processes
	// (requests per minute: PerPeriod(rpm, time.Minute)).
	//
	// Both limits are the queue's, kept in its row and shared by every
	// process: they are configured in one place (the process that sets
	// them, e.g. the coordinator or one worker), and a process that
	// leaves them unset keeps the ones stored rather than clearing them.
	// A process that sets them replaces them for all; a RateLimit whose
	// Limit is 0, or a GlobalConcurrency below 0, lifts that limit.
	RateLimit *RateLimit
	// PollInterval is how often the queue is polled for work and
	// FanOut polls for results (default 100ms).
	PollInterval time.Duration
	// Logger receives DBOS's logs (default: discarded).
	Logger *slog.Logger
	// EnqueueOnly makes this process a coordinator: FanOut enqueues on
	// the queue and waits, and the process takes no work from it (only
	// its own recovered work), leaving the items to the workers.
	EnqueueOnly bool
	// Role is what this process beats as in baton.executors: RoleWorker
	// (the default), RoleCoordinator (the default with EnqueueOnly) or
	// RoleRun (a baton run's own engine), so that status counts as
	// workers only the processes that take queue work.
	Role string
	// Heartbeat is how often the engine records that it is alive and
	// looks for dead executors' work to adopt (default 5s). DeadAfter is
	// how old an executor's last beat must be for it to count as dead
	// (default 30s or six beats, whichever is longer; at least three beats). A dead executor's PENDING work
	// is re-enqueued within DeadAfter + Heartbeat of its last beat: see
	// adopt.go.
	Heartbeat, DeadAfter time.Duration
	// OnAdopt, when set, is told of each dead executor this engine
	// adopted and the items it re-enqueued (a worker logs it).
	OnAdopt func(executor string, items []string)
}

// Engine runs items as DBOS workflows: Run in this process, FanOut on a
// durable queue that every process of the same application and version
// with the same Tasks takes work from.
type Engine struct {
	dctx  dbos.Context
	tasks engine.Tasks
	queue dbos.Queue
	poll  time.Duration
	// stop ends when Close starts, so that waits return before DBOS
	// shuts down under them.
	stop   context.Context
	cancel context.CancelFunc
	heart  *heart
	wait   waiters
}

var _ engine.Engine = (*Engine)(nil)

// input is what a DBOS workflow records as its input.
type input struct {
	Task  string `json:"task"`
	Input []byte `json:"input"`
}

// Open connects to the database (creating DBOS's schema when missing),
// registers the tasks and the queue, and launches DBOS, which recovers the
// work this ExecutorID left unfinished.
func Open(ctx context.Context, cfg Config, tasks engine.Tasks) (*Engine, error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("dbos engine: no database URL")
	}
	if cfg.AppVersion == "" {
		return nil, errors.New("dbos engine: no application version (workers and coordinators must agree on one)")
	}
	if cfg.AppName == "" {
		cfg.AppName = "baton"
	}
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = "local"
	}
	if cfg.Queue == "" {
		cfg.Queue = "baton"
	}
	if cfg.WorkerConcurrency < 1 {
		cfg.WorkerConcurrency = 1
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = defaultHeartbeat
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = max(defaultDeadAfter, 6*cfg.Heartbeat)
	}
	if cfg.DeadAfter < 3*cfg.Heartbeat {
		return nil, fmt.Errorf("dbos engine: DeadAfter %v must be at least three heartbeats (%v)", cfg.DeadAfter, 3*cfg.Heartbeat)
	}
	// Migrated first under baton's lock, so that workers starting at once
	// never race on the schema; DBOS then only checks it.
	if err := Migrate(ctx, cfg.DatabaseURL); err != nil {
		return nil, fmt.Errorf("dbos engine: %w", err)
	}
	dctx, err := dbos.NewContext(ctx, dbos.Config{
		AppName: cfg.AppName, DatabaseURL: cfg.DatabaseURL, ApplicationVersion: cfg.AppVersion,
		ExecutorID: cfg.ExecutorID, Logger: cfg.Logger, SkipMigrations: true,
	})
	if err != nil {
		return nil, fmt.Errorf("dbos engine: %w", err)
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("dbos engine: %w", err)
	}
	stop, cancel := context.WithCancel(context.Background())
	e := &Engine{dctx: dctx, tasks: tasks, poll: cfg.PollInterval, stop: stop, cancel: cancel}
	role := cfg.Role
	switch {
	case role != "":
	case cfg.EnqueueOnly:
		role = RoleCoordinator
	default:
		role = RoleWorker
	}
	e.heart = &heart{pool: pool, dctx: dctx, id: cfg.ExecutorID, appName: cfg.AppName, appVersion: cfg.AppVersion, role: role,
		every: cfg.Heartbeat, deadAfter: cfg.DeadAfter, onAdopt: cfg.OnAdopt, done: make(chan struct{})}
	dbos.RegisterWorkflow(dctx, e.workflow, dbos.WithWorkflowName(workflowName))
	// A coordinator leaves the limits the workers set alone, unless it
	// sets one itself.
	conflict, err := queueConflict(dctx, &cfg)
	if err != nil {
		dbos.Shutdown(dctx, 10*time.Second)
		pool.Close()
		return nil, fmt.Errorf("dbos engine: queue %q: %w", cfg.Queue, err)
	}
	opts := []dbos.QueueOption{dbos.WithWorkerConcurrency(cfg.WorkerConcurrency), dbos.WithQueueBasePollingInterval(cfg.PollInterval),
		dbos.WithQueueOnConflict(conflict)}
	global, rl, err := sharedLimits(dctx, cfg)
	if err != nil {
		dbos.Shutdown(dctx, 10*time.Second)
		pool.Close()
		return nil, fmt.Errorf("dbos engine: queue %q: %w", cfg.Queue, err)
	}
	if global > 0 {
		opts = append(opts, dbos.WithGlobalConcurrency(global))
	}
	if rl != nil {
		opts = append(opts, dbos.WithRateLimiter(&dbos.RateLimiter{Limit: rl.Limit, Period: rl.Period}))
	}
	if e.queue, err = dbos.RegisterQueue(dctx, cfg.Queue, opts...); err != nil {
		dbos.Shutdown(dctx, 10*time.Second)
		pool.Close()
		return nil, fmt.Errorf("dbos engine: queue %q: %w", cfg.Queue, err)
	}
	if cfg.EnqueueOnly {
		// DBOS listens to every queue unless told a set; a set naming
		// no queue in use leaves only its internal queue.
		dbos.ListenQueues(dctx, cfg.Queue+".enqueue-only")
	}
	// The first beat goes before Launch, so that no live engine takes
	// this executor for dead while it recovers its own work.
	if err := e.heart.beat(ctx); err != nil {
		dbos.Shutdown(dctx, 10*time.Second)
		pool.Close()
		return nil, fmt.Errorf("dbos engine: %w (has the database been migrated? baton engine migrate)", err)
	}
	if err := dbos.Launch(dctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("dbos engine: launch: %w", err)
	}
	go e.heart.run(stop)
	return e, nil
}

// workflow runs one item's task with a stepper over DBOS steps.
func (e *Engine) workflow(dctx dbos.Context, in input) ([]byte, error) {
	task, ok := e.tasks[in.Task]
	if !ok {
		return nil, fmt.Errorf("%w %q", engine.ErrUnknownTask, in.Task)
	}
	return task(engine.WithStepper(dctx, stepper{dctx}), in.Input)
}

// stepper makes each Step a DBOS step named by its key. DBOS answers a step
// from its record by its position in the workflow and refuses a replay that
// asks for a different name at that position, so a task that is not
// deterministic fails rather than gets another request's answer.
type stepper struct{ dctx dbos.Context }

func (s stepper) Step(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	return dbos.RunAsStep(dbos.From(s.dctx, ctx), func(sctx context.Context) ([]byte, error) { return fn(sctx) },
		dbos.WithStepName(key))
}

// Run runs it as a workflow in this process. An ID already recorded is not
// started again: a success is answered from the record, a failure is
// rewound to its failed step, a cancelled one resumed, and one still
// running (here, or recovered from a process that stopped) is waited for.
// ctx cancels the run itself, durably, when this call started it (one
// resumed, rewound or recovered runs from DBOS's internal queue, and ctx
// only stops the waiting); a later Run of the ID continues it.
func (e *Engine) Run(ctx context.Context, it engine.Item) ([]byte, error) {
	if _, ok := e.tasks[it.Task]; !ok {
		return nil, fmt.Errorf("item %q: %w %q", it.ID, engine.ErrUnknownTask, it.Task)
	}
	if e.stop.Err() != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, engine.ErrClosed)
	}
	// The workflow runs under a context that ends with ctx or Close.
	wctx, cancel := context.WithCancel(e.dctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	defer context.AfterFunc(e.stop, cancel)()
	existing, err := e.statuses([]string{it.ID})
	if err != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	if err := e.start(dbos.From(e.dctx, wctx), it, existing[it.ID], false); err != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	var out []byte
	var runErr error
	if err := e.await(ctx, []string{it.ID}, func(_ string, o []byte, werr error) { out, runErr = o, werr }); err != nil {
		if existing[it.ID] == "" {
			// This process started it, and DBOS records the cancel
			// as the workflow unwinds: wait for that, so that a Run
			// right after this one finds it cancelled, not running.
			cancel()
			e.settle(it.ID)
		}
		return nil, fmt.Errorf("item %q: %w", it.ID, err)
	}
	if runErr != nil {
		return nil, fmt.Errorf("item %q: %w", it.ID, runErr)
	}
	return out, nil
}

// FanOut enqueues the items on the queue and waits for their results. The
// items are durable once enqueued: a cancelled ctx stops the waiting, not
// the items, which any process on the queue finishes; a later FanOut of the
// same IDs collects them.
func (e *Engine) FanOut(ctx context.Context, items []engine.Item) []engine.Result {
	res := make([]engine.Result, len(items))
	at := map[string][]int{}
	var ids []string
	for i, it := range items {
		if _, ok := e.tasks[it.Task]; !ok {
			res[i].Err = fmt.Errorf("item %q: %w %q", it.ID, engine.ErrUnknownTask, it.Task)
			continue
		}
		if _, dup := at[it.ID]; !dup {
			ids = append(ids, it.ID)
		}
		at[it.ID] = append(at[it.ID], i)
	}
	fail := func(id string, err error) {
		for _, i := range at[id] {
			res[i].Err = fmt.Errorf("item %q: %w", id, err)
		}
		delete(at, id)
	}
	if e.stop.Err() != nil {
		for _, id := range ids {
			fail(id, engine.ErrClosed)
		}
		return res
	}
	existing, err := e.statuses(ids)
	if err != nil {
		for _, id := range ids {
			fail(id, err)
		}
		return res
	}
	var started []string
	for _, id := range ids {
		if err := e.start(e.dctx, items[at[id][0]], existing[id], true); err != nil {
			fail(id, err)
			continue
		}
		started = append(started, id)
	}
	err = e.await(ctx, started, func(id string, out []byte, werr error) {
		for _, i := range at[id] {
			res[i] = engine.Result{Output: out, Err: werr}
			if werr != nil {
				res[i].Err = fmt.Errorf("item %q: %w", id, werr)
			}
		}
		delete(at, id)
	})
	if err != nil {
		// What is left in at was started and not collected.
		for id := range at {
			fail(id, err)
		}
	}
	return res
}

// Close stops the waits, then shuts DBOS down: the items running here are
// cut short and stay PENDING, to be recovered when a process with this
// ExecutorID launches again (or adopted by another).
func (e *Engine) Close() error {
	e.cancel()
	// The beats stop, and the row stays: the items left PENDING here are
	// adopted once it is stale, unless this ExecutorID comes back first.
	<-e.heart.done
	defer e.heart.pool.Close()
	if err := dbos.Shutdown(e.dctx, 30*time.Second); err != nil {
		return fmt.Errorf("dbos engine: shutdown: %w", err)
	}
	return nil
}

// PerPeriod is a limit of n item starts per period across every process on
// the queue (PerPeriod(60, time.Minute) is 60 requests per minute). A
// period of 0 is a minute.
func PerPeriod(n int, period time.Duration) *RateLimit {
	if period <= 0 {
		period = time.Minute
	}
	return &RateLimit{Limit: n, Period: period}
}

// sharedLimits is the global concurrency and rate limit to register the
// queue with: cfg's where set, else the ones stored in the queue's row.
// DBOS's registration overwrites the whole row, so a worker started without
// limits would otherwise lift the limit another process set for everyone.
func sharedLimits(dctx dbos.Context, cfg Config) (int, *RateLimit, error) {
	global, rl := cfg.GlobalConcurrency, cfg.RateLimit
	if global == 0 || rl == nil {
		q, err := dbos.RetrieveQueue(dctx, cfg.Queue)
		switch {
		case errors.Is(err, dbos.ErrQueueNotFound):
		case err != nil:
			return 0, nil, fmt.Errorf("read its stored limits: %w", err)
		default:
			if n := q.GetGlobalConcurrency(); global == 0 && n != nil {
				global = *n
			}
			if r := q.GetRateLimit(); rl == nil && r != nil {
				rl = &RateLimit{Limit: r.Limit, Period: r.Period}
			}
		}
	}
	// An explicit lift: set, so not carried over, and registered as none.
	if rl != nil && rl.Limit <= 0 {
		rl = nil
	}
	return max(global, 0), rl, nil
}
