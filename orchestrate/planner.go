package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// Planner modes, the values of Config.Planner. The record's planner field
// names the planner that ran: PlannerLLM, PlannerOutline or
// PlannerRetrieval.
const (
	// PlannerAuto, the default, chooses by cost (autoMode): the full
	// planner on a context under AutoFullBelow tokens, the outline planner
	// when its request and the expected sub-agents stay well below the
	// single call, else one direct call (PlannerDirect) with the whole
	// context when it fits the window. When the chosen planner fails (no
	// valid plan after its repair round, a request too long for the
	// window, an outline that does not fit even at the top level) the
	// retrieval planner plans instead, with a warning.
	PlannerAuto = "auto"
	// PlannerLLM is the full planner: one model call that reads the whole
	// context. Asked for explicitly, it never falls back: a failure ends
	// the run.
	PlannerLLM = "llm"
	// PlannerFull is another name for PlannerLLM (the planner reads the full
	// context).
	PlannerFull = "full"
	// PlannerOutline is the outline planner: one model call that reads the
	// documents' outline (package outline) instead of their text, so a
	// context many times the planner's window can be planned. Asked for
	// explicitly, it never falls back.
	PlannerOutline = "outline"
	// PlannerRetrieval ranks sections against the task; no model call.
	PlannerRetrieval = "retrieval"
)

// FullPlannerShare is the largest share of the planner model's window that
// auto lets the full planner's request take on a short context, counted with its margin
// against the window less the reply's max_tokens. Past it the outline
// planner runs: a request that fills most of a window costs nearly a
// single call on its own, before any sub-agent runs, and models read the
// far end of a nearly full window least reliably. At half the window the
// full planner still sees every word of any document it can read well.
const FullPlannerShare = 0.5

// ErrPlannerMode is returned for a Config.Planner that is not a mode.
var ErrPlannerMode = errors.New("unknown planner mode")

// ValidPlanner reports whether mode is a value Config.Planner accepts.
func ValidPlanner(mode string) bool {
	switch mode {
	case PlannerAuto, PlannerLLM, PlannerFull, PlannerOutline, PlannerRetrieval:
		return true
	}
	return false
}

// plannerChoice is which planner a run starts with, and why.
type plannerChoice struct {
	mode   string // PlannerLLM, PlannerOutline, PlannerRetrieval or PlannerDirect
	reason string
	// explicit is true when a model planner was asked for by name: then
	// it does not fall back.
	explicit bool
	// req and tokens are the model planner's first request and its count,
	// built once because the count is over the whole context (full) or
	// the outline (outline).
	req    *llm.Request
	tokens int
	// view is the outline the outline planner reads.
	view *outlineView
	// err is why the chosen model planner cannot run at all (its request
	// would not fit the window, or no outline fits): the run fails when
	// the planner was asked for by name, else the retrieval planner runs.
	err error
}

// choosePlanner decides which planner a real run would start with; plan
// then lets a dry run plan with the retrieval planner whatever it says.
func (r *run) choosePlanner() plannerChoice {
	requested := r.cfg.Planner
	c := plannerChoice{explicit: requested != PlannerAuto}
	switch requested {
	case PlannerRetrieval:
		return plannerChoice{mode: PlannerRetrieval, reason: "requested (--planner retrieval)"}
	case PlannerOutline:
		c.mode, c.reason = PlannerOutline, "requested (--planner outline)"
	case PlannerAuto:
		c.mode = r.autoMode(&c)
	default:
		c.mode, c.reason = PlannerLLM, "requested (--planner "+requested+")"
	}
	switch c.mode {
	case PlannerLLM:
		if c.req == nil {
			c.req = r.plannerRequest()
			c.tokens = r.requestTokens(c.req)
		}
		c.err = r.fits("planner", c.req, c.tokens)
	case PlannerOutline:
		if c.view == nil {
			c.view, c.req, c.tokens, c.err = r.outlineRequest(0)
		}
		if c.err == nil {
			c.reason += "; " + c.view.describe()
		}
	}
	return c
}

// fallsBack reports whether a model planner's failure may give way to the
// retrieval planner: a plan that stayed invalid, a request too long for the
// window, or no outline that fits. Anything else (a bad key, a cancelled
// run) would fail the sub-agents too, so it ends the run.
func fallsBack(err error) bool {
	return errors.Is(err, ErrPlan) || errors.Is(err, ErrWindow) || errors.Is(err, llm.ErrPromptTooLong) || errors.Is(err, outline.ErrTooLarge)
}

func (r *run) plan(ctx context.Context) (*plan.Plan, error) {
	r.cfg.Progress(Event{Index: -1, Phase: "plan", Status: "running"})
	// Choosing and the retrieval planner take seconds on a document of
	// millions of lines: a cancel before either ends the run there.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := r.choosePlanner()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.rec.Planner, r.rec.PlannerReason = c.mode, c.reason
	if c.mode == PlannerDirect {
		if r.rec.DryRun {
			r.rec.EstimatedPlanner = PlannerDirect
			r.rec.PlannerReason = "dry run: no model is called; a real run would answer in one direct call (" + c.reason + ")"
		}
		return directPlan(), nil
	}
	if r.rec.DryRun {
		return r.dryRunPlan(c), nil
	}
	if c.mode == PlannerRetrieval {
		return r.retrievalPlan(), nil
	}
	if c.err != nil {
		if c.explicit || !fallsBack(c.err) {
			return nil, fmt.Errorf("plan: %w", c.err)
		}
		r.rec.Planner = PlannerRetrieval
		r.rec.PlannerReason = c.reason + "; but " + r.errText(c.err) + "; the retrieval planner ran instead"
		r.warnf("the %s planner could not run: %s; the retrieval planner planned instead", plannerName(c.mode), r.errText(c.err))
		return r.retrievalPlan(), nil
	}
	var p *plan.Plan
	var err error
	if c.mode == PlannerOutline {
		p, err = r.outlinePlan(ctx, c)
	} else {
		p, err = r.modelPlan(ctx, c, nil)
	}
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
	name := plannerName(c.mode)
	r.rec.Planner = PlannerRetrieval
	r.rec.PlannerReason = c.reason + "; the " + name + " planner failed (" + why + "); the retrieval planner ran instead"
	r.warnf("the %s planner failed: %s (%s); fell back to the retrieval planner", name, why, r.errText(err))
	return r.retrievalPlan(), nil
}

// dryRunPlan plans with the retrieval planner, since no model is called, and
// counts as planner input what the planner a real run would choose would
// read, so that the estimate is that of a real run.
func (r *run) dryRunPlan(c plannerChoice) *plan.Plan {
	r.rec.Planner = PlannerRetrieval
	r.rec.EstimatedPlanner = PlannerRetrieval
	reason := "dry run: no model is called, so the retrieval planner planned"
	switch {
	case c.mode == PlannerRetrieval:
		reason = "dry run: " + c.reason
	case c.err != nil && c.explicit:
		r.rec.EstimatedPlanner = "" // a real run would fail
		reason += "; a real run with --planner " + r.cfg.Planner + " would fail: " + r.errText(c.err)
		r.warnf("%s; a real run with --planner %s would fail", r.errText(c.err), r.cfg.Planner)
	case c.err != nil:
		reason += "; a real run would too (" + c.reason + ", but " + r.errText(c.err) + ")"
		r.warnf("%s; a real run would plan with the retrieval planner", r.errText(c.err))
	default:
		r.acct.PlannerInputTokens = c.tokens
		r.rec.EstimatedPlanner = c.mode
		reason += fmt.Sprintf("; a real run would use the %s planner (%s); planner input is an estimate: the %d tokens of that planner's first request, without a repair round",
			plannerName(c.mode), c.reason, c.tokens)
	}
	r.rec.PlannerReason = reason
	return r.retrievalPlan()
}

// plannerName is how warnings and reasons name a model planner.
func plannerName(mode string) string {
	if mode == PlannerLLM {
		return "LLM"
	}
	return mode
}

func (r *run) plannerRequest() *llm.Request {
	sys, user := plan.PlannerPrompt(r.promptInput())
	return r.planRequest(sys, user)
}

func (r *run) planRequest(sys, user string) *llm.Request {
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

// modelPlan runs a model planner: one call, one more without the JSON
// schema if the provider refused it, and exactly one repair round. check,
// when not nil, is what the plan must also pass beyond Parse (it may fix
// what needs no model, too); a plan that still fails it after the repair is
// used with the problems as warnings, since they concern single pointers
// the assembler reports in turn.
func (r *run) modelPlan(ctx context.Context, c plannerChoice, check func(*plan.Plan) error) (*plan.Plan, error) {
	req := c.req
	opts := plan.Options{MaxSubtasks: r.cfg.MaxSubtasks, Lines: r.doc.NumLines()}
	parse := func(text string) (*plan.Plan, error, error) {
		p, err := plan.Parse(text, opts)
		if err != nil || check == nil {
			return p, err, nil
		}
		return p, nil, check(p)
	}
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
	if resp.Truncated() {
		// A plan cut at its limit may still parse, short of the subtasks
		// it was writing: asked for again with a larger limit, or the run
		// ends partial.
		first := resp
		resp = r.uncut("the plan", req, c.tokens, resp, func(again *llm.Request) (*llm.Response, error) {
			return r.call(ctx, "planner", again, c.tokens, &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
		})
		if resp != first {
			r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, first.Text)
		}
	}
	r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, resp.Text)
	if c.view != nil && c.view.expandable {
		if resp, err = r.expandRound(ctx, c, req, resp); err != nil {
			return nil, err
		}
	}
	p, perr, cerr := parse(resp.Text)
	if perr == nil && cerr == nil {
		return p, nil
	}
	// Exactly one repair round-trip, quoting what was wrong.
	bad := errors.Join(perr, cerr)
	cut := resp.Truncated()
	if cut {
		// A plan cut at its limit is invalid for that reason alone; the
		// repair, which writes it again, gets a larger limit where the
		// window has room.
		bad = fmt.Errorf("the reply was cut at its %d-token limit (max_tokens): %w", req.MaxTokens, bad)
	}
	r.warnf("planner output was not a valid plan (%v); asked once for a repair", oneLine(bad))
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
		llm.Message{Role: llm.RoleUser, Content: plan.RepairPrompt(resp.Text, bad)})
	n := r.requestTokens(req)
	if next := r.largerLimit(req.Model, n, req.MaxTokens); cut && next > 0 {
		req.MaxTokens = next
	}
	resp, err = r.call(ctx, "plan repair", req, n, &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
	if err != nil {
		return nil, fmt.Errorf("plan repair: %w", err)
	}
	r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, resp.Text)
	if resp.Truncated() {
		r.leftCut("the repaired plan", fmt.Sprintf("the repaired plan was cut at its %d-token limit (max_tokens)", req.MaxTokens))
	}
	p, perr, cerr = parse(resp.Text)
	if perr != nil {
		return nil, fmt.Errorf("%w after one repair: %s", ErrPlan, oneLine(perr))
	}
	if cerr != nil {
		r.warnf("the repaired plan still has problems (%s); its pointers go to the assembler as they are", oneLine(cerr))
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
	var passages []plan.PassageText
	if len(outline) == 0 {
		passages = passageTexts(r.doc)
	}
	return plan.PromptInput{
		Passages:      passages,
		Task:          r.cfg.Task,
		Outline:       outline,
		Skills:        r.skillInfos(),
		MaxSubtasks:   r.cfg.MaxSubtasks,
		DocumentLines: r.doc.NumLines(),
		Context:       r.cfg.Context,
	}
}

func (r *run) retrievalPlan() *plan.Plan {
	in := RetrievalInput(r.doc, r.cfg.Task, r.cfg.MaxSubtasks)
	in.Skills = r.skillInfos()
	return plan.Retrieve(in)
}

// passageTexts is the document's passage index as the retrieval planner
// ranks it; the texts share the document's memory.
func passageTexts(d *slice.Document) []plan.PassageText {
	spans := d.PassageSpans()
	lineOf := d.LineOf
	out := make([]plan.PassageText, len(spans))
	for i, s := range spans {
		out[i] = plan.PassageText{ID: slice.PassageID(i + 1), Text: d.Text()[s[0]:s[1]], Line: lineOf(s[0]), EndLine: lineOf(max(s[1]-1, s[0]))}
	}
	return out
}

// sectionTexts is every section of the context with its text, as the
// retrieval planner ranks them.
func (r *run) sectionTexts() []plan.SectionText { return sectionTexts(r.doc) }

func sectionTexts(doc *slice.Document) []plan.SectionText {
	sections := []plan.SectionText{}
	for _, h := range doc.Outline() {
		body := doc.LinesText(h.Line, h.EndLine) // shares the context: no copy per heading
		sections = append(sections, plan.SectionText{Title: h.Title, Path: h.Path, Level: h.Level, Line: h.Line, EndLine: h.EndLine, Text: body})
	}
	return sections
}
