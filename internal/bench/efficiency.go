package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/tokens"
)

// Variant names the ways a corpus task is run.
const (
	VariantBaton   = "baton"   // the full planner's plan as written
	VariantSeed    = "seed"    // pointers resolved by the seed's rule, as line ranges
	VariantLower   = "lower"   // each subtask given exactly the sections that hold its evidence
	VariantOutline = "outline" // the outline planner, pointing at outline paths
	VariantAuto    = "auto"    // the default planner: whichever auto chooses, answering as the two above
)

// PlannerOutline is the outline planner's mode name. It is written here, not
// taken from orchestrate, so that bench builds whether or not orchestrate
// knows the mode; the outline runs happen only when
// orchestrate.ValidPlanner(PlannerOutline) says it does.
const PlannerOutline = "outline"

// Efficiency is the token accounting of one corpus task under each variant.
type Efficiency struct {
	ID       string
	Context  int // C: tokens of the whole document
	Subtasks int
	Self     int // self-answered subtasks
	Naive    int // every delegated subtask receives the whole context
	// Single is one request with the task and the whole context (the
	// record's single_call_input_tokens); SingleFits says whether it fits
	// the model's window.
	Single     int
	SingleFits bool
	Seed       int
	Baton      int
	Lower      int
	Outline    int // 0 when the outline planner did not run
	// Auto is what the default planner (auto) sent; AutoPlanner is the
	// planner it ran.
	Auto        int
	AutoPlanner string
	// Fallbacks counts delegated subtasks that received the whole context.
	BatonFallbacks, SeedFallbacks int
	// Evidence is where each variant's evidence went.
	Evidence map[string]EvidenceScore
	// Records keep each variant's run record, for cost and checks.
	Records map[string]*orchestrate.Record
	// Requests keep what the fake received in the baton run.
	Requests []llmtest.RecordedRequest
}

// OutlineAvailable reports whether orchestrate has the outline planner.
func OutlineAvailable() bool { return orchestrate.ValidPlanner(PlannerOutline) }

// RunEfficiency drives orchestrate.Ask per task against the evidence fake:
// with the full planner's plan (baton), with the seed's rule applied to the
// same pointers, with each subtask pointed at exactly the sections that hold
// its evidence (the lower bound), and, when orchestrate has it, with the
// outline planner. Token figures are orchestrate's own accounting; the
// fake's usage is counted with another tokenizer.
func RunEfficiency(ctx context.Context, tasks []*Task) ([]Efficiency, error) {
	variants := []string{VariantBaton, VariantSeed, VariantLower}
	if OutlineAvailable() {
		variants = append(variants, VariantOutline, VariantAuto)
	}
	var out []Efficiency
	for _, t := range tasks {
		e := Efficiency{ID: t.ID, Subtasks: len(t.Parsed.Subtasks), Records: map[string]*orchestrate.Record{}, Evidence: map[string]EvidenceScore{}}
		for _, st := range t.Parsed.Subtasks {
			if st.IsSelf() {
				e.Self++
			}
		}
		for _, v := range variants {
			p, err := variantPlan(t, v)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", t.ID, v, err)
			}
			mode, outlineReply := orchestrate.PlannerFull, p
			switch v {
			case VariantOutline:
				mode = PlannerOutline
			case VariantAuto:
				// auto may run either model planner: each gets the
				// plan it would write.
				mode = orchestrate.PlannerAuto
				if outlineReply, err = outlinePlan(t); err != nil {
					return nil, fmt.Errorf("%s (%s): %w", t.ID, v, err)
				}
			}
			rec, reqs, err := askWith(ctx, t, p, outlineReply, mode, 4)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", t.ID, v, err)
			}
			e.Records[v] = rec
			e.Evidence[v] = scoreEvidence(t, rec, reqs)
			a := rec.Accounting
			switch v {
			case VariantBaton:
				e.Context, e.Naive, e.Baton = a.ContextTokens, a.NaiveInputTokens, a.OrchestratedInputTokens
				e.Single, e.SingleFits = a.SingleCallInputTokens, a.SingleCallFits != nil && *a.SingleCallFits
				e.BatonFallbacks = fallbacks(rec)
				e.Requests = reqs
			case VariantSeed:
				e.Seed = a.OrchestratedInputTokens
				e.SeedFallbacks = fallbacks(rec)
			case VariantLower:
				e.Lower = a.OrchestratedInputTokens
			case VariantOutline:
				e.Outline = a.OrchestratedInputTokens
			case VariantAuto:
				e.Auto, e.AutoPlanner = a.OrchestratedInputTokens, rec.Planner
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func fallbacks(rec *orchestrate.Record) int {
	n := 0
	for _, s := range rec.Subtasks {
		if s.Slice != nil && s.Slice.Fallback {
			n++
		}
	}
	return n
}

// variantPlan is the planner reply for a variant: the plan as written, the
// same plan with its pointers replaced by line ranges, or the plan an
// outline planner would write.
func variantPlan(t *Task, v string) (string, error) {
	switch v {
	case VariantBaton, VariantAuto:
		return string(t.Plan), nil
	case VariantOutline:
		return outlinePlan(t)
	}
	p := *t.Parsed
	p.Subtasks = append([]plan.Subtask(nil), t.Parsed.Subtasks...)
	for i := range p.Subtasks {
		st := &p.Subtasks[i]
		if st.IsSelf() {
			continue
		}
		var spans [][2]int
		switch v {
		case VariantSeed:
			spans, _ = SeedSpans(t.Doc, st.ContextPointers.Sections)
		case VariantLower:
			for _, h := range t.EvidenceSections[i] {
				spans = append(spans, [2]int{h.Line, h.EndLine})
			}
		}
		// No spans leaves the pointers empty: the assembler then sends the
		// whole context, which is the seed's fallback.
		st.ContextPointers = plan.Pointers{LineRanges: mergeSpans(spans)}
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// outlinePlan is the plan a planner that read the outline would write for t:
// the same subtasks, each pointing at the outline paths of its intended
// sections, copied from the outline as its prompt asks. A self-answered
// subtask cannot be answered from an outline, so it becomes a lookup of the
// smallest section that holds its evidence.
func outlinePlan(t *Task) (string, error) {
	o, err := outline.Build([]outline.Source{{Name: t.File, Doc: t.Doc}}, tokens.ForModel(ModelName), 0)
	if err != nil {
		return "", err
	}
	byLine := map[int]string{}
	for _, e := range o.Entries {
		byLine[e.Line] = o.Pointer(e)
	}
	p := *t.Parsed
	p.Subtasks = append([]plan.Subtask(nil), t.Parsed.Subtasks...)
	for i := range p.Subtasks {
		st := &p.Subtasks[i]
		var secs []string
		if st.IsSelf() {
			st.Skill, st.Answer = plan.LookupSkill, ""
			for _, h := range t.EvidenceSections[i] {
				secs = append(secs, byLine[h.Line])
			}
		} else {
			for _, s := range t.Intended[i] {
				h, err := FindHeading(t.Doc, s)
				if err != nil {
					return "", err
				}
				secs = append(secs, byLine[h.Line])
			}
		}
		st.ContextPointers = plan.Pointers{Sections: secs}
	}
	b, err := json.Marshal(p)
	return string(b), err
}

func mergeSpans(spans [][2]int) [][2]int {
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var out [][2]int
	for _, s := range spans {
		if k := len(out) - 1; k >= 0 && s[0] <= out[k][1]+1 {
			out[k][1] = max(out[k][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// askOnce runs one ask with planner mode against a fresh evidence fake
// whose planner answers planReply.
func askOnce(ctx context.Context, t *Task, planReply, mode string, concurrency int) (*orchestrate.Record, []llmtest.RecordedRequest, error) {
	return askWith(ctx, t, planReply, planReply, mode, concurrency)
}

// askWith is askOnce with a fake whose outline planner answers
// outlineReply and whose full planner answers planReply.
func askWith(ctx context.Context, t *Task, planReply, outlineReply, mode string, concurrency int) (*orchestrate.Record, []llmtest.RecordedRequest, error) {
	srv, err := newEvidenceFake(t, planReply, outlineReply)
	if err != nil {
		return nil, nil, err
	}
	defer srv.Close()
	rec, err := ask(ctx, srv.AnthropicBaseURL(), baton.AskRequest{
		Task: t.Task, Context: text(t.File, t.Text), Planner: mode,
		Concurrency: concurrency, MaxFallbackTokens: noCeiling(mode),
	}, baton.Events{})
	if err != nil {
		return rec, nil, err
	}
	if !rec.ModelCalled {
		return rec, nil, fmt.Errorf("the model was not called")
	}
	return rec, srv.Requests(), nil
}

// noCeiling lifts the ceiling on fallbacks for the variants that measure
// what fallbacks cost (the seed's rule falls back by design); the default
// planner keeps the default ceiling, as `baton ask` does.
func noCeiling(mode string) int {
	if mode == orchestrate.PlannerAuto {
		return 0
	}
	return -1
}
