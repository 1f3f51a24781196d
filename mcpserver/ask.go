package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/provider"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/telemetry"
	"github.com/baton-dev/baton/tokens"
)

// NoProviderMessage is ask's error when the server's environment names no
// model provider.
const NoProviderMessage = "no model provider: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL in the environment baton mcp is started with (or start Ollama at OLLAMA_HOST), or pass dry_run: true"

// RunsDir is where ask saves its run records, relative to the root: the
// folder `baton ask` saves them in by default, so `baton` finds them alike.
const RunsDir = batondir.Name + "/" + batondir.RunsName

// Bounds on what a host may ask for. Past them a number is a mistake, not a
// wish: each slot is held memory and a connection, and a plan that long is
// no plan.
const (
	MaxAskConcurrency = 64
	MaxAskSubtasks    = 100
)

// The call policy of `baton ask`'s defaults: the host cannot set flags, so
// the server takes what the command line would.
const askMaxAttempts = 5

// openWorld is the annotation of ask: it calls a model provider, writes a
// run record (never over another), and the same input runs again and is
// paid again.
var openWorld = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}

// AskIn is one `baton ask` run.
type AskIn struct {
	Task        string   `json:"task" jsonschema:"the question or task to answer over the documents"`
	Documents   []string `json:"documents" jsonschema:"paths of markdown or text files, relative to the server's root"`
	Planner     string   `json:"planner,omitempty" jsonschema:"auto (default), full or llm (a model call over the whole context), outline (a model call over the documents' outline) or retrieval (ranks sections, no model call)"`
	Model       string   `json:"model,omitempty" jsonschema:"the model name; empty for the provider's default"`
	DryRun      bool     `json:"dry_run,omitempty" jsonschema:"plan and slice without calling a model; return the plan and a token estimate"`
	Concurrency int      `json:"concurrency,omitempty" jsonschema:"sub-agents in flight at once (default 4)"`
	MaxSubtasks int      `json:"max_subtasks,omitempty" jsonschema:"most subtasks a plan may have (default 6)"`
	// MaxFallbackTokens is --max-fallback-tokens.
	MaxFallbackTokens int `json:"max_fallback_tokens,omitempty" jsonschema:"most tokens of context that subtasks whose pointers all missed may send by falling back to the whole context; past it such a subtask fails (0: one single call's worth; -1: no ceiling)"`
}

// AskSubtask is one subtask of the plan, short: the record holds the rest.
type AskSubtask struct {
	ID     int    `json:"id"` // 1-based, in plan order
	Task   string `json:"task"`
	Skill  string `json:"skill"`
	Mode   string `json:"mode"`   // "self" (answered by the planner) or "delegated"
	Status string `json:"status"` // "ok", "failed" or "skipped"
	// Tokens is the local count of what was sent for the subtask (in a
	// dry run, what would be); ContextTokens the size of its slice.
	Tokens        int    `json:"tokens"`
	ContextTokens int    `json:"context_tokens"`
	Error         string `json:"error,omitempty"`
}

// AskOut is what a run answered and where its record is. Answer is empty
// and Spilled says where it went when it is over the result bound.
type AskOut struct {
	RunID      string                 `json:"run_id"`
	Record     string                 `json:"record"` // relative to the root; empty if it could not be saved (a warning says why)
	Status     string                 `json:"status"` // "ok", "partial" or "dry_run"
	DryRun     bool                   `json:"dry_run"`
	Note       string                 `json:"note,omitempty"`
	Planner    string                 `json:"planner"`
	Answer     string                 `json:"answer"`
	Spilled    *Spill                 `json:"spilled,omitempty"`
	Accounting orchestrate.Accounting `json:"accounting"`
	CostUSD    *float64               `json:"cost_usd,omitempty"`
	Subtasks   []AskSubtask           `json:"subtasks"`
	Warnings   []string               `json:"warnings"`
}

func (s *Server) addAskTools() {
	addTool(s, &mcp.Tool{Name: "ask", Annotations: openWorld,
		Description: "Answer a task over documents as `baton ask` does: a planner reads them once and writes a plan, each delegated subtask goes to a sub-agent that sees only its slice, and a synthesis joins the results. No request that would not fit the model's window is sent. Returns the answer, the token accounting against one call with the whole context and against every sub-agent given it, and the path of the saved run record. With dry_run, no model is called and the plan comes back with an estimate; without a provider in the server's environment, ask is an error that says what to set. Sends progress notifications when the request has a progress token."},
		s.ask)
	s.addSkillTools()
	s.addSkillPrompts()
}

func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, AskOut, error) {
	if in.Planner == "" {
		in.Planner = orchestrate.PlannerAuto
	}
	switch {
	case strings.TrimSpace(in.Task) == "":
		return nil, AskOut{}, errors.New("the task is empty")
	case len(in.Documents) == 0:
		return nil, AskOut{}, errors.New("no documents given")
	case !orchestrate.ValidPlanner(in.Planner):
		return nil, AskOut{}, fmt.Errorf("planner must be auto, full, llm, outline or retrieval, not %q", in.Planner)
	case in.Concurrency < 0 || in.Concurrency > MaxAskConcurrency:
		return nil, AskOut{}, fmt.Errorf("concurrency must be between 1 and %d (0 for the default %d), not %d", MaxAskConcurrency, orchestrate.DefaultConcurrency, in.Concurrency)
	case in.MaxFallbackTokens < -1:
		return nil, AskOut{}, fmt.Errorf("max_fallback_tokens must be 0 (one single call's worth), -1 (no ceiling) or a number of tokens, not %d", in.MaxFallbackTokens)
	case in.MaxSubtasks < 0 || in.MaxSubtasks > MaxAskSubtasks:
		return nil, AskOut{}, fmt.Errorf("max_subtasks must be between 1 and %d (0 for the default %d), not %d", MaxAskSubtasks, orchestrate.DefaultMaxSubtasks, in.MaxSubtasks)
	}
	if in.Concurrency == 0 {
		in.Concurrency = orchestrate.DefaultConcurrency
	}
	text, names, err := s.readDocuments(in.Documents)
	if err != nil {
		return nil, AskOut{}, err
	}
	// A bad prices file fails here, before anything is paid for.
	prices, err := pricing.Load(strings.TrimSpace(pricing.DefaultPath(s.getenv)))
	if err != nil {
		return nil, AskOut{}, err
	}

	prog := newAskProgress(ctx, req)
	cfg := orchestrate.Config{
		Task:              in.Task,
		Context:           text,
		Sources:           names,
		Planner:           in.Planner,
		Skills:            s.skills,
		DryRun:            in.DryRun,
		Concurrency:       in.Concurrency,
		MaxSubtasks:       in.MaxSubtasks,
		Progress:          prog.event,
		MaxFallbackTokens: in.MaxFallbackTokens,
	}
	const note = "dry run asked for: no model was called; the figures are local estimates"
	if !in.DryRun {
		m, sel, err := s.resolveModel(ctx, in, prog)
		switch {
		case errors.Is(err, llm.ErrNoProvider):
			// An error, not a quiet dry run: a host started the server
			// without the key (hosts pass a reduced environment), and a
			// dry run's note is easily lost on the way to the user.
			return nil, AskOut{}, errors.New(NoProviderMessage)
		case err != nil:
			return nil, AskOut{}, err
		default:
			cfg.Provider, cfg.ModelName = sel.Provider, sel.Model
			cfg.Model, cfg.Redactor = telemetry.Model(m, s.tracer, sel.Provider, telemetry.CaptureContent(s.getenv)), sel.Redactor
			if sel.Window > 0 {
				// The server runs every request with this window
				// (Ollama's num_ctx), so it is the one to check.
				cfg.Window = sel.Window
			}
		}
	}
	if cfg.Model == nil && in.Model != "" {
		// The estimate is still checked against the named model's window
		// and counted with its tokenizer.
		cfg.ModelName = in.Model
	}
	cfg.Counter = tokens.ForModel(cfg.ModelName)

	cfg.Span = telemetry.Spans(s.tracer)
	actx, endAsk := telemetry.StartAsk(ctx, s.tracer, cfg.Provider, cfg.ModelName)
	rec, runErr := orchestrate.Ask(actx, cfg)
	endAsk(rec, runErr)
	if rec == nil {
		return nil, AskOut{}, runErr
	}
	rec.PriceWith(prices)
	out := AskOut{RunID: rec.ID, Status: rec.Status, DryRun: rec.DryRun, Planner: rec.Planner,
		Accounting: rec.Accounting, CostUSD: rec.CostUSD, Subtasks: []AskSubtask{}, Warnings: rec.Warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if rec.DryRun {
		out.Note = note
	}
	// Saved before anything else can fail: the record is what was paid for.
	if out.Record, err = s.saveRecord(rec); err != nil {
		out.Warnings = append(out.Warnings, err.Error())
	} else if s.onRecord != nil {
		if err := s.onRecord(rec, filepath.Join(s.root.Name(), filepath.FromSlash(out.Record))); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the run is saved in %s but not in the run history: %s", out.Record, oneLine(err.Error())))
		}
	}
	for _, st := range rec.Subtasks {
		out.Subtasks = append(out.Subtasks, AskSubtask{ID: st.Index + 1, Task: st.Task, Skill: st.Skill, Mode: st.Mode,
			Status: st.Status, Tokens: st.PromptTokens, ContextTokens: st.ContextTokens, Error: st.Error})
	}
	switch {
	case runErr == nil:
	case errors.Is(runErr, orchestrate.ErrPartial):
		// An answer with a gap is still an answer; the warning says what
		// is missing, as `baton ask`'s exit code 3 does.
		out.Warnings = append(out.Warnings, fmt.Sprintf("partial answer: %v", runErr))
	case errors.Is(runErr, context.Canceled):
		return nil, AskOut{}, fmt.Errorf("ask cancelled; the run record keeps what finished: %s", orNone(out.Record))
	default:
		return nil, AskOut{}, fmt.Errorf("ask: %s (run record: %s)", oneLine(runErr.Error()), orNone(out.Record))
	}
	if out.Answer, out.Spilled, err = s.spill("ask", rec.Answer, cfg.Counter.Count(rec.Answer)); err != nil {
		return nil, AskOut{}, err
	}
	return nil, out, nil
}

// resolveModel picks the provider from the server's environment and wraps
// it as `baton ask` does: limits inside retry, so a call waiting on backoff
// holds no concurrency slot.
func (s *Server) resolveModel(ctx context.Context, in AskIn, prog *askProgress) (llm.Model, *provider.Selection, error) {
	sel, err := provider.Resolve(ctx, provider.Options{Model: in.Model,
		HTTPClient: llm.NewHTTPClient(llm.DefaultCallTimeout, llm.DefaultIdleTimeout)}, s.getenv)
	if err != nil {
		return nil, nil, err
	}
	// Attempts inside the retry policy: a failed attempt is an event on
	// the call's chat span (telemetry.Model, outside it).
	var m llm.Model = llm.WithLimits(telemetry.Attempts(sel.LLM), llm.Limits{Concurrency: in.Concurrency})
	m = llm.WithRetry(m, llm.RetryPolicy{MaxAttempts: askMaxAttempts,
		OnRetry: func(attempt int, wait time.Duration, err error) {
			prog.note(fmt.Sprintf("attempt %d failed (%s); retrying in %s", attempt, oneLine(sel.Redactor.Error(err).Error()), wait.Round(time.Millisecond)))
		}})
	return m, sel, nil
}

// saveRecord writes the record under RunsDir through the root, atomically,
// and returns its path relative to the root.
func (s *Server) saveRecord(rec *orchestrate.Record) (string, error) {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("run record: %w", err)
	}
	name := path.Join(RunsDir, rec.ID+".json")
	if err := atomicfile.WriteIn(s.root, name, append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("save run record: %w", plainPathErr(err))
	}
	// .baton ignores itself for git, as after `baton ask`. It exists
	// inside the root now (written through it), so the plain path is the
	// root's own folder.
	_ = batondir.Ensure(batondir.At(s.root.Name()).Dir())
	return name, nil
}

func orNone(p string) string {
	if p == "" {
		return "not saved"
	}
	return p
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
