package orchestrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/plan"
)

// expandRound answers an outline planner that asked, instead of planning,
// to see the subsections of a few collapsed headings: their outline lines
// go back in one more planner call, counted as planner input and checked
// against the window like any other, and its reply is the plan. Any other
// reply is returned as it is. The subsections get at most the outline's
// own size, so the round costs at most about one more outline, and no
// more than the window leaves after room for the repair round.
func (r *run) expandRound(ctx context.Context, c plannerChoice, req *llm.Request, resp *llm.Response) (*llm.Response, error) {
	paths, ok := plan.ParseExpand(resp.Text)
	if !ok {
		return resp, nil
	}
	v := c.view
	w := r.window(r.cfg.PlannerModel)
	asked := req.Messages
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text})
	so := r.requestTokens(req)
	room := int(float64(w.Tokens-max(req.MaxTokens, 0))/(1+WindowMargin)) - so - outlineRepairRoom - outlineSlack
	budget := min(v.o.Tokens, room-r.count(plan.ExpandPrompt("", paths)))
	text, missing := "", paths
	if budget > 0 {
		text, missing = v.o.Expand(paths, r.ctxCounter(), budget)
	}
	if text == "" {
		// Nothing to show: the planner is asked for the plan all the
		// same, once, in this round.
		r.warnf("the outline planner asked to see the subsections of %s; none could be shown", strings.Join(quoteAll(paths), ", "))
	} else if len(missing) > 0 {
		r.warnf("the outline planner asked to see the subsections of %s, which could not be shown", strings.Join(quoteAll(missing), ", "))
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: plan.ExpandPrompt(text, missing)})
	out, err := r.call(ctx, "plan expand", req, r.requestTokens(req), &r.rec.Usage.Planner, &r.acct.PlannerInputTokens)
	if err != nil {
		req.Messages = asked
		return nil, fmt.Errorf("plan expand: %w", err)
	}
	r.rec.PlannerOutputs = append(r.rec.PlannerOutputs, out.Text)
	r.rec.PlannerReason += fmt.Sprintf("; it asked to see the subsections of %d headings (%s) in one more call", len(paths), strings.Join(quoteAll(paths), ", "))
	return out, nil
}
