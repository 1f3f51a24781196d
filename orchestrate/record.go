package orchestrate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/atomicfile"
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

// Record is everything one `baton ask` run did, saved as JSON. Its field names
// are a public contract: scripts read them.
type Record struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Task      string    `json:"task"`
	Documents []string  `json:"documents"`

	Provider     string `json:"provider,omitempty"`
	Model        string `json:"model,omitempty"`
	PlannerModel string `json:"planner_model,omitempty"`
	// Planner is "llm" or "retrieval".
	Planner string `json:"planner"`
	// ModelCalled is false for dry runs and runs without a provider: then
	// every token figure is a local count, not provider usage.
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
	Warnings       []string        `json:"warnings"`
	Error          string          `json:"error,omitempty"`
	DurationMS     int64           `json:"duration_ms"`
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
	// system prompt and user message.
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
	// Per phase, for readers who want to see where tokens went.
	PlannerInputTokens   int `json:"planner_input_tokens"`
	SubagentInputTokens  int `json:"subagent_input_tokens"`
	SynthesisInputTokens int `json:"synthesis_input_tokens"`
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
