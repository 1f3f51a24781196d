package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/internal/mapreduce"
	"github.com/baton-dev/baton/llm"
)

// Map-reduce runs a subtask whose answer depends on every part of the
// context (scope "all"), or whose slice would not fit the sub-agent's
// window, over parts of its text that each fit: its skill answers each part
// (map), and reduce requests join the partial answers, in rounds when they
// do not fit one request, until one answer remains for synthesis. Every map
// and reduce request is counted and checked against the window before it is
// sent, and booked in the accounting like any other sub-agent call.

// reduceSystem is the reduce requests' system prompt; it never changes, so
// providers can cache it.
const reduceSystem = `You are the reduce step of a document-analysis pipeline. One subtask was run separately over consecutive parts of the documents, because they are too large for one call or because the answer depends on every part. You receive the subtask and the partial answers in document order, each labelled with the part it came from.

Join them into the one answer the subtask would have had over all those parts at once:
- Counts: add up the parts' counts. Count an instance once even if two neighbouring parts both report it (a part boundary can cut through it).
- Lists: keep every item of every part, in document order, each once.
- Findings: keep the evidence the parts cited (section names, quotes, figures).
- A part that found nothing relevant adds nothing. A part that failed or says its text was cut leaves a gap: say so plainly.
Reply with the joined answer only, in the form the subtask asks for; do not describe the parts or the pipeline unless something is missing.`

// partSlack is the share of a part's budget kept free, with a few tokens
// more: a part's count is the sum of its lines' counts, and the whole
// request is counted again before it is sent.
const partSlack = 0.03

// partial is one answer over the parts from..to of a subtask's text (the
// labels of its first and last map part).
type partial struct {
	from, to string
	text     string
}

func (p partial) render() string {
	label := p.from
	if p.to != p.from {
		label = "joined answer of " + p.from + " to " + p.to
	}
	return "### " + label + "\n" + strings.TrimRight(p.text, "\n") + "\n\n"
}

// promptRoom is the largest prompt, in counted tokens, that fits window
// with maxTokens of reply (see fitsWindow).
func promptRoom(window, maxTokens int) int {
	n := int(float64(window-max(maxTokens, 0)) / (1 + WindowMargin))
	for n > 0 && !fitsWindow(n, maxTokens, window) {
		n--
	}
	return max(n, 0)
}

// mapParts splits subtask j's text into parts whose map requests fit the
// sub-agent's window; budget is the parts' token budget. When even an
// empty part would not fit, the error is a *WindowError.
func (r *run) mapParts(j *job) ([]mapreduce.Part, int, error) {
	w := r.window(r.cfg.ModelName)
	room := promptRoom(w.Tokens, r.cfg.SubagentMax)
	sample := r.mapInstruction(j, "part 999 of 999 (lines 9999999-9999999)")
	overhead := r.systemTokens(j.sk.Name, j.sk.Body) + r.count(contextBlock(""), sample)
	budget := room - overhead - int(float64(room)*partSlack) - 8
	if budget < 1 {
		return nil, 0, &WindowError{What: fmt.Sprintf("subtask %d map part", j.i+1), Model: r.cfg.ModelName,
			Prompt: overhead, MaxTokens: r.cfg.SubagentMax, Window: w.Tokens, Source: w.Source}
	}
	parts, err := mapreduce.Split(j.text, budget, r.ctxCounter())
	if err != nil {
		return nil, 0, fmt.Errorf("subtask %d: split: %w", j.i+1, err)
	}
	if len(parts) == 0 { // an empty context: one request over it, as without map-reduce
		parts = []mapreduce.Part{{Text: j.text, StartLine: 1, EndLine: 1}}
	}
	return parts, budget, nil
}

func (r *run) partLabel(k, n, first, last int) string {
	return fmt.Sprintf("part %d of %d (lines %d-%d)", k, n, first, last)
}

// mapInstruction is the subtask's instruction for one part.
func (r *run) mapInstruction(j *job, label string) string {
	return j.instr + "\nThe context above is " + label + " of the text this subtask covers; other analysts answer the other parts, and the answers are joined after. Answer for this part alone: count or list only what it holds, and say plainly when it holds nothing relevant.\n"
}

// mapRequest builds and counts the map request over one part. A part of
// the context is counted from its index with its wrapping (exact, reading
// only the wrapping and the part's ends).
func (r *run) mapRequest(j *job, text, label string) (req *llm.Request, n int) {
	block, instr := contextBlock(text), r.mapInstruction(j, label)
	req = r.subagentRequest(j.sk.Body, block+instr)
	p, s := contextBlockWrap(text)
	return req, r.systemTokens(j.sk.Name, j.sk.Body) + r.ctxCounter().Wrapped3(p, text, s) + r.count(instr)
}

// mapReduce runs subtask j over the parts of its text. why is the window
// error of its one whole request, nil for a subtask with scope all.
func (r *run) mapReduce(ctx context.Context, j *job, why error) (string, error) {
	res := &r.rec.Subtasks[j.i]
	parts, budget, err := r.mapParts(j)
	if err != nil {
		if why != nil {
			return "", why
		}
		return "", err
	}
	if why != nil {
		r.warnf("subtask %d: its slice (%d tokens) would not fit the sub-agent's window in one request; ran it over %d parts and joined the answers", j.i+1, res.ContextTokens, len(parts))
	}
	r.mu.Lock()
	res.Parts = len(parts)
	res.PromptTokens = 0
	r.mu.Unlock()
	lists, err := mapreduce.Map(ctx, parts, r.cfg.Concurrency, func(ctx context.Context, p mapreduce.Part) ([]partial, error) {
		return r.mapPart(ctx, j, p.Text, budget, fmt.Sprint(p.Index+1), len(parts), p.StartLine, p.EndLine)
	})
	if err != nil {
		return "", fmt.Errorf("map: %w", err)
	}
	var partials []partial
	for _, l := range lists {
		partials = append(partials, l...)
	}
	if len(partials) == 1 {
		return partials[0].text, nil
	}
	return r.reduce(ctx, j, partials)
}

// mapPart answers one part. A part whose request turns out over the window
// (its lines' counts summed a little under the count of the whole) is split
// again with half the budget and its pieces answered in turn.
func (r *run) mapPart(ctx context.Context, j *job, text string, budget int, num string, of, first, last int) ([]partial, error) {
	label := fmt.Sprintf("part %s of %d (lines %d-%d)", num, of, first, last)
	var over *WindowError
	var sent *llm.Request
	var sentN int
	resp, err := r.subCall(ctx, j, callMap, text, func() (*llm.Request, int, error) {
		req, n := r.mapRequest(j, text, label)
		if err := r.fits(fmt.Sprintf("subtask %d map %s", j.i+1, label), req, n); err != nil {
			errors.As(err, &over)
			return nil, 0, err
		}
		r.cfg.Progress(Event{Index: j.i, Phase: "map", Status: "running", Message: label + ": " + j.st.Task})
		sent, sentN = req, n
		return req, n, nil
	})
	if over == nil {
		if err != nil {
			return nil, err
		}
		resp = r.uncutSub(ctx, j, callMap, text, fmt.Sprintf("subtask %d's answer to %s", j.i+1, label), sent, sentN, resp)
		return []partial{{from: label, to: label, text: resp.Text}}, nil
	}
	pieces, serr := mapreduce.Split(text, budget/2, r.ctxCounter())
	if serr != nil || len(pieces) < 2 {
		return nil, over
	}
	var out []partial
	for _, p := range pieces {
		got, perr := r.mapPart(ctx, j, p.Text, budget/2, fmt.Sprintf("%s.%d", num, p.Index+1), of, first+p.StartLine-1, first+p.EndLine-1)
		if perr != nil {
			return nil, perr
		}
		out = append(out, got...)
	}
	return out, nil
}

// reduce joins the partial answers in rounds of requests that each fit the
// window.
func (r *run) reduce(ctx context.Context, j *job, partials []partial) (string, error) {
	w := r.window(r.cfg.ModelName)
	room := promptRoom(w.Tokens, r.cfg.SubagentMax)
	frame := r.count(reduceSystem, r.reduceUser(j, nil))
	budget := room - frame - int(float64(room)*partSlack) - 8
	size := func(p partial) int { return r.count(p.render()) }
	out, err := mapreduce.Reduce(ctx, partials, budget, r.cfg.Concurrency, size, func(ctx context.Context, g mapreduce.Group[partial]) (partial, error) {
		what := fmt.Sprintf("subtask %d reduce round %d, group %d of %d", j.i+1, g.Round, g.Index+1, g.Of)
		var req *llm.Request
		var n int
		send := func(build func() *llm.Request) (*llm.Response, error) {
			return r.subCall(ctx, j, callReduce, "", func() (*llm.Request, int, error) {
				req = build()
				n = r.requestTokens(req)
				if err := r.fits(what, req, n); err != nil {
					return nil, 0, err
				}
				r.cfg.Progress(Event{Index: j.i, Phase: "reduce", Status: "running", Message: fmt.Sprintf("round %d, group %d of %d: %s", g.Round, g.Index+1, g.Of, j.st.Task)})
				return req, n, nil
			})
		}
		resp, err := send(func() *llm.Request { return r.subagentRequest(reduceSystem, r.reduceUser(j, g.Items)) })
		if err != nil {
			return partial{}, err
		}
		// A joined answer cut at its limit loses the parts at its end:
		// asked for again with a larger one, or recorded as a gap.
		resp = r.uncut("the "+what+" reply", req, n, resp, func(again *llm.Request) (*llm.Response, error) {
			return send(func() *llm.Request { return again })
		})
		r.mu.Lock()
		r.rec.Subtasks[j.i].ReduceRounds = max(r.rec.Subtasks[j.i].ReduceRounds, g.Round)
		r.mu.Unlock()
		return partial{from: g.Items[0].from, to: g.Items[len(g.Items)-1].to, text: resp.Text}, nil
	})
	if err != nil {
		return "", fmt.Errorf("reduce: %w", err)
	}
	return out.text, nil
}

// reduceUser lays out one reduce request: the task, the subtask and the
// partial answers in order.
func (r *run) reduceUser(j *job, items []partial) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Overall task (for orientation only): %s\n\n", r.cfg.Task)
	fmt.Fprintf(&b, "The subtask: %s\n", j.st.Task)
	if hint := j.sk.OutputHint; hint != "" {
		fmt.Fprintf(&b, "Its output: %s\n", hint)
	}
	b.WriteString("\nPartial answers, in document order:\n\n")
	for _, it := range items {
		b.WriteString(it.render())
	}
	b.WriteString("Join the partial answers into one answer to the subtask.\n")
	return b.String()
}
