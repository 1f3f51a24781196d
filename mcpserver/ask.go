package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/skill"
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
	Documents   []string `json:"documents" jsonschema:"paths of markdown or text files or of folders (a folder gives its markdown and text files), relative to the server's root: at most 1000 files and 64 MiB in all; a file named twice is read once"`
	Planner     string   `json:"planner,omitempty" jsonschema:"auto (default), full or llm (a model call over the whole context), outline (a model call over the documents' outline) or retrieval (ranks sections, no model call)"`
	Model       string   `json:"model,omitempty" jsonschema:"the model name; empty for the provider's default"`
	DryRun      bool     `json:"dry_run,omitempty" jsonschema:"plan and slice without calling a model; return the plan and a token estimate"`
	Concurrency int      `json:"concurrency,omitempty" jsonschema:"sub-agents in flight at once (default 4)"`
	MaxSubtasks int      `json:"max_subtasks,omitempty" jsonschema:"most subtasks a plan may have (default 6)"`
	// MaxFallbackTokens is --max-fallback-tokens.
	MaxFallbackTokens int `json:"max_fallback_tokens,omitempty" jsonschema:"most tokens of context that subtasks whose pointers all missed may send by falling back to the whole context; past it such a subtask fails (0: one single call's worth; -1: no ceiling)"`
	// The rest are `baton ask`'s flags of the same names. The provider's
	// endpoint is not among them: the server's environment decides where
	// its keys are sent.
	Provider          string `json:"provider,omitempty" jsonschema:"anthropic, openai or ollama, among those the server's environment has keys for; empty to detect"`
	PlannerModel      string `json:"planner_model,omitempty" jsonschema:"the planner's model; empty for the run's model"`
	Window            int    `json:"window,omitempty" jsonschema:"context window of the models in tokens; 0 for baton's table of known models. No request over it is sent"`
	FailFast          bool   `json:"fail_fast,omitempty" jsonschema:"stop at the first subtask that fails instead of answering with what succeeded"`
	SubagentMaxTokens int    `json:"subagent_max_tokens,omitempty" jsonschema:"bound on each sub-agent's return, in tokens (0 for the default)"`
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
	// The rest are the record's fields of the same names, as
	// `baton ask --json` prints them.
	Provider     string                 `json:"provider,omitempty"`
	Model        string                 `json:"model,omitempty"`
	PlannerModel string                 `json:"planner_model,omitempty"`
	Usage        orchestrate.PhaseUsage `json:"usage"`
}

func (s *Server) addAskTools() {
	addTool(s, &mcp.Tool{Name: "ask", Annotations: openWorld,
		Description: "Answer a task over documents as `baton ask` does: a planner reads them once and writes a plan, each delegated subtask goes to a sub-agent that sees only its slice, and a synthesis joins the results. No request that would not fit the model's window is sent. Returns the answer, the token accounting against one call with the whole context and against every sub-agent given it, and the path of the saved run record. With dry_run, no model is called and the plan comes back with an estimate; without a provider in the server's environment, ask is an error that says what to set. Sends progress notifications when the request has a progress token."},
		s.ask)
	s.addSkillTools()
	s.addSkillPrompts()
}

func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, AskOut, error) {
	switch {
	case strings.TrimSpace(in.Task) == "":
		return nil, AskOut{}, errors.New("the task is empty")
	case len(in.Documents) == 0 || len(in.Documents) > MaxDocuments:
		// Refused before anything else looks at the list (Validate, the
		// file system): it is as long as the request let it be.
		return nil, AskOut{}, documentCount(len(in.Documents))
	case in.Concurrency < 0 || in.Concurrency > MaxAskConcurrency:
		return nil, AskOut{}, fmt.Errorf("concurrency must be between 1 and %d (0 for the default %d), not %d", MaxAskConcurrency, orchestrate.DefaultConcurrency, in.Concurrency)
	case in.MaxSubtasks < 0 || in.MaxSubtasks > MaxAskSubtasks:
		return nil, AskOut{}, fmt.Errorf("max_subtasks must be between 1 and %d (0 for the default %d), not %d", MaxAskSubtasks, orchestrate.DefaultMaxSubtasks, in.MaxSubtasks)
	}
	areq := askRequest(in, s.skills)
	if err := areq.Validate(); err != nil {
		return nil, AskOut{}, err
	}
	docs, err := s.readDocuments(in.Documents)
	if err != nil {
		return nil, AskOut{}, err
	}
	text, parts := askContext(docs)
	areq.Context = &document.Context{Text: text, Parts: parts}
	for _, d := range docs {
		areq.Context.Sources = append(areq.Context.Sources, document.Source{Name: d.Name})
	}
	var (
		mu       sync.Mutex
		warnings []string
	)
	prog := newAskProgress(ctx, req)
	res, runErr := baton.Ask(ctx, areq, baton.WithEnv(s.getenv), baton.WithTracer(s.tracer),
		baton.WithEvents(baton.Events{Progress: prog.event,
			Retry: func(attempt int, wait time.Duration, err error) {
				prog.note(fmt.Sprintf("attempt %d failed (%s); retrying in %s", attempt, oneLine(err.Error()), wait.Round(time.Millisecond)))
			},
			Warning: func(msg string) { mu.Lock(); warnings = append(warnings, msg); mu.Unlock() }}),
		baton.WithRecorder(s.saveRecord, s.indexRecord))
	if res == nil {
		if errors.Is(runErr, llm.ErrNoProvider) {
			// An error, not a quiet dry run: a host started the server
			// without the key (hosts pass a reduced environment), and a
			// dry run's note is easily lost on the way to the user.
			return nil, AskOut{}, errors.New(NoProviderMessage)
		}
		return nil, AskOut{}, runErr
	}
	return s.askOut(res, runErr, warnings)
}

// askRequest maps the tool's input onto the library's request: the same
// choices as `baton ask`'s flags of the same names.
func askRequest(in AskIn, skills *skill.Library) baton.AskRequest {
	return baton.AskRequest{Task: in.Task, Planner: in.Planner, PlannerModel: in.PlannerModel,
		Provider: in.Provider, Model: in.Model, Window: in.Window,
		Concurrency: in.Concurrency, MaxSubtasks: in.MaxSubtasks,
		MaxFallbackTokens: in.MaxFallbackTokens, SubagentMaxTokens: in.SubagentMaxTokens,
		DryRun: in.DryRun, FailFast: in.FailFast, Skills: skills,
		// Validate wants documents; they are read after it, through the root.
		Documents: in.Documents,
		Calls:     baton.CallPolicy{MaxAttempts: askMaxAttempts}}
}

// askOut is the tool's result of a finished run.
func (s *Server) askOut(res *baton.Result, runErr error, setup []string) (*mcp.CallToolResult, AskOut, error) {
	rec := res.Record
	out := AskOut{RunID: rec.ID, Record: res.Path, Status: rec.Status, DryRun: rec.DryRun, Planner: rec.Planner,
		Accounting: rec.Accounting, CostUSD: rec.CostUSD, Subtasks: []AskSubtask{}, Warnings: append(setup, rec.Warnings...),
		Provider: rec.Provider, Model: rec.Model, PlannerModel: rec.PlannerModel, Usage: rec.Usage}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if rec.DryRun {
		out.Note = "dry run asked for: no model was called; the figures are local estimates"
	}
	if res.SaveErr != nil {
		out.Warnings = append(out.Warnings, res.SaveErr.Error())
	} else if res.IndexErr != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the run is saved in %s but not in the run history: %s", out.Record, oneLine(res.IndexErr.Error())))
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
	var err error
	if out.Answer, out.Spilled, err = s.spill("ask", rec.Answer, tokens.ForModel(rec.Model).Count(rec.Answer)); err != nil {
		return nil, AskOut{}, err
	}
	return nil, out, nil
}

// indexRecord adds a saved record to the run history when the server
// keeps one (Config.OnRecord).
func (s *Server) indexRecord(rec *orchestrate.Record, rel string) error {
	if s.onRecord == nil {
		return nil
	}
	return s.onRecord(rec, filepath.Join(s.root.Name(), filepath.FromSlash(rel)))
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
