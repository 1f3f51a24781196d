package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/plan"
)

// Planner modes, the values of Config.Planner. The record's planner field
// names the planner that ran: PlannerLLM or PlannerRetrieval.
const (
	// PlannerAuto, the default, runs the LLM planner when its request fits
	// the planner model's window and the retrieval planner otherwise, and
	// falls back to the retrieval planner when the LLM planner fails (no
	// valid plan after its repair round, or a provider's "prompt too long").
	PlannerAuto = "auto"
	// PlannerLLM is the LLM planner: one model call that reads the whole
	// context. Asked for explicitly, it never falls back: a failure ends
	// the run.
	PlannerLLM = "llm"
	// PlannerFull is another name for PlannerLLM (the planner reads the full
	// context).
	PlannerFull = "full"
	// PlannerRetrieval ranks sections against the task; no model call.
	PlannerRetrieval = "retrieval"
)

// ErrPlannerMode is returned for a Config.Planner that is not a mode.
var ErrPlannerMode = errors.New("unknown planner mode")

// ValidPlanner reports whether mode is a value Config.Planner accepts.
func ValidPlanner(mode string) bool {
	switch mode {
	case PlannerAuto, PlannerLLM, PlannerFull, PlannerRetrieval:
		return true
	}
	return false
}

// plannerChoice is which planner a run starts with, and why.
type plannerChoice struct {
	mode   string // PlannerLLM or PlannerRetrieval
	reason string
	// explicit is true when the LLM planner was asked for by name: then it
	// does not fall back.
	explicit bool
	// req and tokens are the LLM planner's first request and its count,
	// built once because the count is over the whole context.
	req    *llm.Request
	tokens int
}

// choosePlanner decides which planner runs. It is the one place that knows
// the modes: an outline planner for contexts over the window belongs here,
// in place of the retrieval planner that auto falls back to today.
func (r *run) choosePlanner() plannerChoice {
	requested := r.cfg.Planner
	if requested == PlannerRetrieval {
		return plannerChoice{mode: PlannerRetrieval, reason: "requested (--planner retrieval)"}
	}
	req := r.plannerRequest()
	n := r.requestTokens(req)
	c := plannerChoice{mode: PlannerLLM, explicit: requested != PlannerAuto, req: req, tokens: n}
	fitErr := r.fits("planner", req, n)
	switch {
	case r.rec.DryRun:
		c.mode, c.reason = PlannerRetrieval, "dry run: no model is called, so the retrieval planner planned"
		if fitErr != nil && c.explicit {
			r.warnf("%s; a real run with --planner %s would fail", oneLine(fitErr), requested)
		} else if fitErr != nil {
			c.reason += "; a real run would too: " + oneLine(fitErr)
			r.warnf("%s; a real run would plan with the retrieval planner", oneLine(fitErr))
		}
	case fitErr != nil && c.explicit:
		// Asked for by name: the run fails with the window error when
		// the request is refused, never sent.
		c.reason = "requested (--planner " + requested + ")"
	case fitErr != nil:
		c.mode = PlannerRetrieval
		c.reason = oneLine(fitErr) + "; the retrieval planner ran instead"
		r.warnf("%s", c.reason)
	case c.explicit:
		c.reason = "requested (--planner " + requested + ")"
	default:
		c.reason = fmt.Sprintf("auto: the planner request (%d tokens) fits the %d-token window of %q", n, r.window(req.Model).Tokens, req.Model)
	}
	return c
}

// fallsBack reports whether an LLM planner failure may give way to the
// retrieval planner: a plan that stayed invalid, or a request too long for
// the window. Anything else (a bad key, a cancelled run) would fail the
// sub-agents too, so it ends the run.
func fallsBack(err error) bool {
	return errors.Is(err, ErrPlan) || errors.Is(err, ErrWindow) || errors.Is(err, llm.ErrPromptTooLong)
}

func (r *run) plan(ctx context.Context) (*plan.Plan, error) {
	r.cfg.Progress(Event{Index: -1, Phase: "plan", Status: "running"})
	c := r.choosePlanner()
	r.rec.Planner, r.rec.PlannerReason = c.mode, c.reason
	if c.mode == PlannerRetrieval {
		if r.rec.DryRun && c.req != nil && fitsWindow(c.tokens, c.req.MaxTokens, r.window(c.req.Model).Tokens) {
			// Count what the model planner would have read, so the
			// estimate is that of a real run.
			r.acct.PlannerInputTokens = c.tokens
		}
		return r.retrievalPlan(), nil
	}
	p, err := r.llmPlan(ctx, c)
	if err == nil || c.explicit || !fallsBack(err) {
		return p, err
	}
	why := "it gave no valid plan after its repair round"
	switch {
	case errors.Is(err, llm.ErrPromptTooLong):
		why = "the provider said its prompt is too long for the window"
	case errors.Is(err, ErrWindow):
		why = "its repair request would not fit the window"
	}
	r.rec.Planner = PlannerRetrieval
	r.rec.PlannerReason = "auto: the LLM planner failed (" + why + "); the retrieval planner ran instead"
	r.warnf("the LLM planner failed: %s (%s); fell back to the retrieval planner", why, r.errText(err))
	return r.retrievalPlan(), nil
}

func (r *run) plannerRequest() *llm.Request {
	sys, user := plan.PlannerPrompt(r.promptInput())
	return &llm.Request{
		Model:       r.cfg.PlannerModel,
		System:      sys,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: user}},
		Temperature: llm.Float(0),
		MaxTokens:   r.cfg.PlannerMax,
		JSONSchema:  &llm.Schema{Name: "plan", Schema: plan.JSONSchema()},
		Stream:      r.cfg.Stream,
	}
}

// llmPlan runs the LLM planner: one call, one more without the JSON schema
// if the provider refused it, and exactly one repair round.
func (r *run) llmPlan(ctx context.Context, c plannerChoice) (*plan.Plan, error) {
	req := c.req
	opts := plan.Options{MaxSubtasks: r.cfg.MaxSubtasks, Lines: r.doc.NumLines()}
	resp, err := r.call(ctx, "planner", req, c.tokens, &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
	var pe *llm.ProviderError
	if err != nil && errors.As(err, &pe) && pe.StatusCode == http.StatusBadRequest && !errors.Is(err, llm.ErrPromptTooLong) {
		// Some models and compatible servers refuse structured output.
		// The plan parser tolerates free text, so ask again without it.
		// A prompt too long for the window is not such a refusal:
		// sending it again would be refused again, and paid for.
		r.warnf("the provider refused the planner request with a JSON schema (%s); asked again without one", r.errText(err))
		req.JSONSchema = nil
		resp, err = r.call(ctx, "planner", req, c.tokens, &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, resp.Text)
	p, perr := plan.Parse(resp.Text, opts)
	if perr == nil {
		return p, nil
	}
	// Exactly one repair round-trip, quoting the validation error.
	r.warnf("planner output was not a valid plan (%v); asked once for a repair", oneLine(perr))
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
		llm.Message{Role: llm.RoleUser, Content: plan.RepairPrompt(resp.Text, perr)})
	resp, err = r.call(ctx, "plan repair", req, r.requestTokens(req), &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
	if err != nil {
		return nil, fmt.Errorf("plan repair: %w", err)
	}
	r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, resp.Text)
	p, perr = plan.Parse(resp.Text, opts)
	if perr != nil {
		return nil, fmt.Errorf("%w after one repair: %s", ErrPlan, oneLine(perr))
	}
	return p, nil
}

func (r *run) skillInfos() []plan.SkillInfo {
	var out []plan.SkillInfo
	for _, s := range r.cfg.Skills.List() {
		out = append(out, plan.SkillInfo{Name: s.Name, Description: s.Description})
	}
	return out
}

func (r *run) promptInput() plan.PromptInput {
	var outline []plan.OutlineEntry
	for _, h := range r.doc.Outline() {
		outline = append(outline, plan.OutlineEntry{Level: h.Level, Title: h.Title, Line: h.Line, EndLine: h.EndLine, Path: h.UniquePath})
	}
	return plan.PromptInput{
		Task:          r.cfg.Task,
		Outline:       outline,
		Skills:        r.skillInfos(),
		MaxSubtasks:   r.cfg.MaxSubtasks,
		DocumentLines: r.doc.NumLines(),
		Context:       r.cfg.Context,
	}
}

func (r *run) retrievalPlan() *plan.Plan {
	var sections []plan.SectionText
	for _, h := range r.doc.Outline() {
		body := r.doc.LinesText(h.Line, h.EndLine) // shares the context: no copy per heading
		sections = append(sections, plan.SectionText{Title: h.Title, Path: h.Path, Level: h.Level, Line: h.Line, EndLine: h.EndLine, Text: body})
	}
	return plan.Retrieve(plan.RetrieveInput{Task: r.cfg.Task, Sections: sections, Skills: r.skillInfos(), MaxSubtasks: r.cfg.MaxSubtasks})
}
