package orchestrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/plan"
)

// PlannerDirect is what auto runs when no plan would cost less than the
// single call: one request with the task and the whole context, whose reply
// is the answer. It is the single call itself, so it costs exactly the
// record's single_call_input_tokens. It is never asked for by name.
const PlannerDirect = "direct"

// The figures auto chooses by. They come from `baton bench`: over the
// token corpus, the sub-agents and the synthesis of an outline plan took
// 3,000 to 10,000 input tokens (about 4,500 in the middle), whatever the
// document's size, while the outline itself grows with the document's
// headings and, left to fill the window, took up to half of a changelog.
const (
	// AutoFullBelow is the context size under which auto keeps the full
	// planner (when its request takes at most FullPlannerShare of the
	// window): on so short a document the plan, the skills and the
	// synthesis cost at most a few thousand tokens more than the single
	// call, the margin docs/concepts.md states.
	AutoFullBelow = 2000
	// AutoOutlineShare caps the outline auto builds at this share of the
	// single call, collapsing deeper headings first; the outline planner
	// asks for the children of the branches it needs (outline_expand.go).
	// When even the top level is over it, the outline may take up to
	// AutoOutlineLimit of the single call less OutlineRunTokens.
	AutoOutlineShare = 0.2
	// OutlineRunTokens is what auto expects an outline plan's sub-agents
	// and synthesis to send, on top of the outline planner's request.
	OutlineRunTokens = 6000
	// AutoOutlineLimit is the share of the single call the outline
	// planner's request and OutlineRunTokens together may reach for auto
	// to plan from the outline; the rest is room for a plan whose slices
	// are larger than expected.
	AutoOutlineLimit = 0.8
)

// autoMode picks the planner for auto by cost and fills c.reason with the
// figures it decided on: the full planner on a very short context, the
// outline planner when its request and the expected sub-agents stay well
// below the single call, else one direct call (the single call itself)
// when it fits the window, else the outline planner, the only one that
// can read the context.
func (r *run) autoMode(c *plannerChoice) string {
	a := &r.acct
	s := a.SingleCallInputTokens
	fits := a.SingleCallFits != nil && *a.SingleCallFits
	if a.ContextTokens < AutoFullBelow {
		reason, ok := r.fullFitsShare(c)
		if ok {
			c.reason = fmt.Sprintf("auto: the context (%d tokens) is under %d tokens, where the full planner costs little; %s", a.ContextTokens, AutoFullBelow, reason)
			return PlannerLLM
		}
		// A window so small that a short context's full planner does not
		// fit half of it leaves no room for cost: the whole outline.
		c.reason = fmt.Sprintf("auto: the context (%d tokens) is under %d tokens, but %s, so the outline planner plans", a.ContextTokens, AutoFullBelow, reason)
		return PlannerOutline
	}
	if !fits {
		c.reason = fmt.Sprintf("auto: the single call %d tokens would not fit the %d-token window, so the outline planner plans", s, a.SingleCallWindow)
		return PlannerOutline
	}
	limit := int(AutoOutlineLimit * float64(s))
	budget := int(AutoOutlineShare * float64(s))
	v, req, n, err := r.outlineRequest(budget)
	if most := limit - OutlineRunTokens; errors.Is(err, outline.ErrTooLarge) && most > budget {
		// Even the top level is over the share (many headings side by
		// side): the outline may take whatever still keeps the plan
		// within the limit.
		v, req, n, err = r.outlineRequest(most)
	}
	var why string
	switch {
	case err != nil:
		why = fmt.Sprintf("no outline fits within %.0f%% of the single call %d tokens less the %d expected for sub-agents and synthesis (%s)", 100*AutoOutlineLimit, s, OutlineRunTokens, r.errText(err))
	case pointable(v.o) < 2:
		why = fmt.Sprintf("the outline shows %d headings and passages, too few to point a sub-agent anywhere smaller than the single call %d tokens", pointable(v.o), s)
	case n+OutlineRunTokens <= limit:
		c.view, c.req, c.tokens = v, req, n
		c.reason = fmt.Sprintf("auto: the outline planner's request (%d tokens, its outline within %d tokens) and the %d tokens expected for sub-agents and synthesis make %d, within %.0f%% of the single call %d tokens (%d), so the outline planner plans",
			n, v.o.Budget, OutlineRunTokens, n+OutlineRunTokens, 100*AutoOutlineLimit, s, limit)
		return PlannerOutline
	default:
		why = fmt.Sprintf("the outline planner's request (%d tokens) and the %d tokens expected for sub-agents and synthesis make %d, over %.0f%% of the single call %d tokens (%d)",
			n, OutlineRunTokens, n+OutlineRunTokens, 100*AutoOutlineLimit, s, limit)
	}
	c.reason = "auto: " + why + "; one direct call answers with the whole context, which is the single call"
	return PlannerDirect
}

// fullFitsShare reports whether the full planner's request takes at most
// FullPlannerShare of the planner model's window, and says why with the
// figures; on true c.req and c.tokens hold the request.
func (r *run) fullFitsShare(c *plannerChoice) (string, bool) {
	w := r.window(r.cfg.PlannerModel)
	room := int(FullPlannerShare * float64(w.Tokens-max(r.cfg.PlannerMax, 0)))
	what, n := "the context alone", r.acct.ContextTokens
	if n+margin(n) <= room {
		c.req = r.plannerRequest()
		what, n = "its request", r.requestTokens(c.req)
	}
	verb, ok := "exceeds", c.req != nil && n+margin(n) <= room
	if ok {
		verb, c.tokens = "fits in", n
	} else {
		c.req = nil
	}
	return fmt.Sprintf("%s (%d tokens, %d with the margin) %s %.0f%% of the %d-token window of %s less the %d-token reply (%d tokens)",
		what, n, n+margin(n), verb, 100*FullPlannerShare, w.Tokens, modelLabel(w.Model), r.cfg.PlannerMax, room), ok
}

// direct answers the task in one request with the whole context: exactly
// the single call the record counts, booked as the synthesis since its
// reply is the answer (and streams as one). A dry run counts it.
func (r *run) direct(ctx context.Context) error {
	n := r.acct.SingleCallInputTokens
	r.acct.NaiveInputTokens = n
	if r.rec.DryRun {
		r.acct.SynthesisInputTokens, r.acct.Estimate = n, true
		return nil
	}
	r.cfg.Progress(Event{Index: -1, Phase: "synthesis", Status: "running"})
	req := &llm.Request{
		Model:       r.cfg.ModelName,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: userMessage(r.cfg.Context, singleCallInstruction(r.cfg.Task))}},
		Temperature: llm.Float(*r.cfg.Temperature),
		MaxTokens:   r.cfg.SynthesisMax,
		Stream:      r.cfg.Stream,
		OnText:      r.cfg.OnText,
		OnRestart:   r.cfg.OnRestart,
	}
	resp, err := r.call(ctx, CallSynthesis, req, n, &r.rec.Usage.Synthesis, &r.acct.SynthesisInputTokens)
	if err != nil {
		return fmt.Errorf("direct call: %w", err)
	}
	r.rec.Answer = resp.Text
	r.cfg.Progress(Event{Index: -1, Phase: "synthesis", Status: "ok"})
	return nil
}

// directPlan is the record's plan of a direct run: no subtasks.
func directPlan() *plan.Plan {
	return &plan.Plan{Subtasks: []plan.Subtask{}, Reasoning: "answered in one direct call with the whole context"}
}

// pointable is how many places the outline lets a plan point at: its
// headings, and the passages it lists for a document without headings or
// under a section too large to send whole. A long text without headings is
// all passages, and a plan can send each sub-agent a few of them.
func pointable(o *outline.Outline) int {
	n := len(o.Entries)
	for _, d := range o.Documents {
		n += len(d.Passages)
	}
	for _, e := range o.Entries {
		n += len(e.Passages)
	}
	return n
}
