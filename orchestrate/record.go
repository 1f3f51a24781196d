package orchestrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/runid"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// Subtask modes and statuses, as they appear in run records.
const (
	ModeSelf      = "self"
	ModeDelegated = "delegated"

	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped" // not run: a dry run, or cancelled by --fail-fast
)

// Run statuses, the values of Record.Status.
const (
	RunOK      = "ok"      // an answer from every subtask
	RunPartial = "partial" // an answer, but some delegated subtasks failed
	RunFailed  = "failed"  // no answer; Error says why
	RunDryRun  = "dry_run" // no model was called; the figures are estimates
)

// Record is everything one `baton ask` run did, saved as JSON, on failure
// too. Its field names are a public contract: scripts read them, and fields
// are only ever added.
//
// What a script usually reads first:
//
//   - status: "ok", "partial", "failed" or "dry_run" (the RunOK... constants).
//     A partial run has an answer that says what is missing; a failed run
//     has none, and error says why.
//   - model_called: true whenever any request reached a provider, failed runs
//     included; then usage holds what the provider reported, which was paid
//     for. False for dry runs, and for runs that stopped before any call.
//   - planner: the planner that made the plan, "llm" (the full planner),
//     "outline" or "retrieval", or "direct" when auto answered in one call
//     with the whole context (the single call; the plan has no subtasks);
//     planner_mode is the mode asked for ("auto",
//     "full", "llm", "outline", "retrieval") and planner_reason says why
//     planner ran, with the figures: the mode asked for, auto's costs
//     against the single call, the outline the outline planner read, or
//     the failure that made auto fall back to the retrieval planner. In a
//     dry run planner is "retrieval" and planner_reason names the planner a
//     real run would use, whose first request the planner input estimates.
//   - phase_duration_ms: wall time of each phase (plan, assemble, dispatch,
//     synthesis); a phase that did not run is 0. duration_ms is the whole run.
//   - windows: the context window each model's requests were checked
//     against, and where it came from ("known", "override" for --window,
//     "assumed" for a model baton does not know). A request that would not
//     fit (see WindowMargin) is never sent: the planner falls back (under
//     auto), a subtask fails, a synthesis ends the run.
//   - document_map: each document's line range in the context, its size and
//     its top sections, the lines slices' matched ranges are numbered in;
//     calls: every model request with start_ms and end_ms from the run's
//     start, its attempts and each retry's error and wait. Both are for
//     the HTML report (baton runs report); records before them lack them.
type Record struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Task      string    `json:"task"`
	Documents []string  `json:"documents"`
	// Status is RunOK, RunPartial, RunFailed or RunDryRun.
	Status string `json:"status"`

	Provider     string `json:"provider,omitempty"`
	Model        string `json:"model,omitempty"`
	PlannerModel string `json:"planner_model,omitempty"`
	// Planner is the planner that made the plan: "llm", "outline",
	// "retrieval", or "direct" (auto's one call with the whole context).
	Planner string `json:"planner"`
	// PlannerMode is the mode asked for: "auto", "full", "llm", "outline"
	// or "retrieval".
	PlannerMode string `json:"planner_mode"`
	// PlannerReason says why Planner ran, with the figures the choice was
	// made on.
	PlannerReason string `json:"planner_reason"`
	// EstimatedPlanner, in a dry run only, is the planner a real run
	// would use ("llm", "outline" or "retrieval"); planner_input_tokens is
	// the count of its first request.
	EstimatedPlanner string `json:"estimated_planner,omitempty"`
	// ModelCalled is true whenever a request was sent to a provider, also
	// when the run then failed. When false (dry runs, runs without a
	// provider, runs that failed before a call) every token figure is a
	// local count, not provider usage.
	ModelCalled bool `json:"model_called"`
	DryRun      bool `json:"dry_run"`

	Answer string     `json:"answer"`
	Plan   *plan.Plan `json:"plan"`
	// PlannerOutputs keeps the planner's raw text, the first answer and the
	// repair answer if one was requested, so an invalid plan can be examined.
	PlannerOutputs []string        `json:"planner_outputs,omitempty"`
	Subtasks       []SubtaskResult `json:"subtasks"`
	Usage          PhaseUsage      `json:"usage"`
	Accounting     Accounting      `json:"accounting"`
	// Windows holds one entry per model whose requests were checked.
	Windows  []ModelWindow `json:"windows"`
	CostUSD  *float64      `json:"cost_usd"`       // nil: no model called, or a model without a price (cost.go)
	Cost     *Cost         `json:"cost,omitempty"` // cost_usd by phase, with the prices used
	Warnings []string      `json:"warnings"`
	Error    string        `json:"error,omitempty"`
	// DurationMS is the whole run; PhaseDurationMS splits it by phase.
	DurationMS      int64          `json:"duration_ms"`
	PhaseDurationMS PhaseDurations `json:"phase_duration_ms"`
	// DocumentMap is each document's size and sections as the run parsed
	// them (docmap.go), so a report can draw what every slice covered after
	// the documents are gone or changed. Records before it lack it.
	DocumentMap []DocumentOutline `json:"document_map,omitempty"`
	// Calls is every model request sent, in the order they started, with
	// its times and retries (calls.go); empty in a dry run. Records before
	// it lack it.
	Calls []Call `json:"calls"`
}

// PhaseDurations is the wall time of each phase in milliseconds; 0 for a
// phase that did not run. Sub-agents run in parallel, so dispatch is less
// than the sum of the subtasks' own duration_ms.
type PhaseDurations struct {
	Plan      int64 `json:"plan"`
	Assemble  int64 `json:"assemble"`
	Dispatch  int64 `json:"dispatch"`
	Synthesis int64 `json:"synthesis"`
}

// status is the Status of a record that Ask ends with err.
func status(rec *Record, err error) string {
	switch {
	case err == nil && rec.DryRun:
		return RunDryRun
	case err == nil:
		return RunOK
	case errors.Is(err, ErrPartial):
		return RunPartial
	}
	return RunFailed
}

// SubtaskResult is one subtask of the plan and what became of it.
type SubtaskResult struct {
	Index  int    `json:"index"`
	Task   string `json:"task"`
	Skill  string `json:"skill"`
	Mode   string `json:"mode"`
	Status string `json:"status"`
	// ContextTokens is the size of the slice this subtask was given (0 for
	// self-answered subtasks).
	ContextTokens int `json:"context_tokens"`
	// PromptTokens is the local count of everything sent for this subtask:
	// system prompt and user message (for one refused as over its window,
	// what would have been sent).
	PromptTokens int       `json:"prompt_tokens"`
	Usage        llm.Usage `json:"usage"`
	Error        string    `json:"error"`
	Output       string    `json:"output,omitempty"`
	// ResolvedSkill is the skill whose prompt was used; it differs from
	// Skill when the plan named an unknown one and the generic prompt ran.
	ResolvedSkill string     `json:"resolved_skill,omitempty"`
	Slice         *SliceInfo `json:"slice,omitempty"`
	Attempts      int        `json:"attempts,omitempty"`
	DurationMS    int64      `json:"duration_ms,omitempty"`
	// Scope is "all" when the plan asked for the subtask to run over every
	// part of the context.
	Scope string `json:"scope,omitempty"`
	// Parts, MapCalls, ReduceCalls and ReduceRounds describe a subtask run
	// by map-reduce (scope "all", or a slice too large for one request):
	// the parts its text was split into, the requests that answered them
	// (more than Parts when a part had to be split again), the requests
	// that joined the answers and in how many rounds. PromptTokens and
	// Usage then sum all of those requests. All 0 for a subtask run in
	// one request. In a dry run MapCalls is the map requests a real run
	// would send, and the reduce fields are 0: they depend on the answers.
	Parts        int `json:"parts,omitempty"`
	MapCalls     int `json:"map_calls,omitempty"`
	ReduceCalls  int `json:"reduce_calls,omitempty"`
	ReduceRounds int `json:"reduce_rounds,omitempty"`
}

// SliceInfo says how the assembler cut a subtask's context.
type SliceInfo struct {
	Matched   []SliceMatch `json:"matched"`
	Unmatched []string     `json:"unmatched"`
	// Misses says why each unmatched pointer matched nothing: ambiguous
	// (with the sections' unique paths) or not found (with the nearest).
	Misses   []slice.Miss `json:"misses,omitempty"`
	Fallback bool         `json:"fallback"`
	Lines    int          `json:"lines"`
}

// SliceMatch is one pointer and the part of the context it matched.
type SliceMatch struct {
	Pointer   string `json:"pointer"`
	Heading   string `json:"heading,omitempty"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	// Bytes is the byte range (end exclusive) a passage pointer selected;
	// a passage may begin or end inside a line.
	Bytes *[2]int `json:"bytes,omitempty"`
}

// PhaseUsage is provider-reported usage per phase, summed over calls.
type PhaseUsage struct {
	Planner   llm.Usage `json:"planner"`
	Subagents llm.Usage `json:"subagents"`
	Synthesis llm.Usage `json:"synthesis"`
	Total     llm.Usage `json:"total"`
}

// Accounting compares what the run sent against the naive baseline in which
// every delegated subtask receives the whole context. Both sides are counted
// locally with the same counter, prompt by prompt, so the ratio is exact for
// that counter and independent of any provider's tokenizer.
type Accounting struct {
	// Counter names the encoding used for every figure below.
	Counter string `json:"counter"`
	// ContextTokens is the size of the whole context (all documents).
	ContextTokens int `json:"context_tokens"`
	// NaiveInputTokens is what this run would have sent with the whole
	// context in every delegated prompt: planner + naive sub-agent prompts +
	// synthesis.
	NaiveInputTokens int `json:"naive_input_tokens"`
	// OrchestratedInputTokens is what this run actually sent (or, in a dry
	// run, would send before synthesis).
	OrchestratedInputTokens int     `json:"orchestrated_input_tokens"`
	SavingsRatio            float64 `json:"savings_ratio"`
	// SingleCallInputTokens is what one request with the task and the
	// whole context would send to the run's model (baseline.go), the
	// alternative a user would pick. SingleCallFits says whether that
	// request, with the reply's max_tokens, fits SingleCallWindow.
	SingleCallInputTokens int   `json:"single_call_input_tokens"`
	SingleCallFits        *bool `json:"single_call_fits"`
	SingleCallWindow      int   `json:"single_call_window"`
	// SingleCallSavingsRatio is 1 - orchestrated / single call. It is left
	// out of an estimate (a dry run), whose orchestrated side has no
	// synthesis yet while the single call is whole: the comparison would
	// flatter baton.
	SingleCallSavingsRatio *float64 `json:"single_call_savings_ratio"`
	// Per phase, for readers who want to see where tokens went.
	PlannerInputTokens   int `json:"planner_input_tokens"`
	SubagentInputTokens  int `json:"subagent_input_tokens"`
	SynthesisInputTokens int `json:"synthesis_input_tokens"`
	// MapCalls and ReduceCalls count the map-reduce requests of all
	// subtasks; SubagentInputTokens includes their prompts.
	MapCalls    int `json:"map_calls"`
	ReduceCalls int `json:"reduce_calls"`
	// Fallbacks counts the delegated subtasks sent the whole context
	// because no pointer of theirs matched (scope "all" is not one), and
	// FallbackInputTokens is what their requests sent (part of
	// SubagentInputTokens). FallbacksRefused counts those that failed
	// instead, since sending the context again would have passed
	// FallbackCeiling, the most the run's fallbacks may send, each counted
	// at the context it carries (context_tokens; its skill's prompt and
	// the task come on top): Config.MaxFallbackTokens, by default
	// single_call_input_tokens, 0 when there is no ceiling.
	Fallbacks           int `json:"fallbacks"`
	FallbackInputTokens int `json:"fallback_input_tokens"`
	FallbacksRefused    int `json:"fallbacks_refused"`
	FallbackCeiling     int `json:"fallback_ceiling"`
	// Estimate is true when no model was called: the synthesis prompt is
	// then unknown and left out of both sides.
	Estimate bool `json:"estimate"`
	// Calibration relates the local counts above to the prompt tokens the
	// provider reported for the same calls (ratio = reported / counted).
	Calibration tokens.CalibrationSummary `json:"calibration"`
}

func (a *Accounting) finish() {
	a.OrchestratedInputTokens = a.PlannerInputTokens + a.SubagentInputTokens + a.SynthesisInputTokens
	if a.NaiveInputTokens > 0 {
		a.SavingsRatio = 1 - float64(a.OrchestratedInputTokens)/float64(a.NaiveInputTokens)
	}
	if a.SingleCallInputTokens > 0 && !a.Estimate && a.OrchestratedInputTokens > 0 {
		v := 1 - float64(a.OrchestratedInputTokens)/float64(a.SingleCallInputTokens)
		a.SingleCallSavingsRatio = &v
	}
}

// newRunID names a run as baton run names its runs (package runid).
func newRunID(t time.Time) string { return runid.New(t) }

// Save writes the record atomically to dir/<id>.json and returns the path.
func (r *Record) Save(dir string) (string, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("run record: %w", err)
	}
	p := filepath.Join(dir, r.ID+".json")
	if err := atomicfile.Write(p, append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("save run record: %w", err)
	}
	return p, nil
}
