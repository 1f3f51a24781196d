package orchestrate

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// job is one delegated subtask between its cut and its calls. It holds the
// slice, never a built request: requests are built only when a call slot is
// free, so memory grows with the concurrency, not with the plan.
type job struct {
	i     int
	st    plan.Subtask
	sk    *skill.Skill
	text  string // the slice; the whole context itself for a fallback or scope all
	whole bool   // text is the whole context, whose counts are already known
	// ct is text counted once: its size in the record and its block in
	// the request are both taken from it (count.go).
	ct    tokens.Counted
	instr string
	// naive is the subtask's naive prompt (the same request with the
	// whole context), added to the accounting with its first call.
	naive      int
	naiveAdded bool
	// fallback is true when text is the whole context because no pointer
	// matched; refused, when the fallback ceiling kept it from being sent.
	fallback bool
	refused  error
}

// cut resolves subtask i's skill and cuts its slice. It counts nothing: a
// fallback to the whole context, and a subtask with scope all, take the
// context itself, whose size Ask counted once.
func (r *run) cut(i int) *job {
	res := &r.rec.Subtasks[i]
	st := r.rec.Plan.Subtasks[i]
	sk, ok := r.cfg.Skills.Get(st.Skill)
	if !ok {
		sk = skill.Generic()
		r.warnf("subtask %d: unknown skill %q; used the generic analyst prompt", i+1, st.Skill)
	}
	res.ResolvedSkill = sk.Name
	j := &job{i: i, st: st, sk: sk, instr: subagentInstruction(r.cfg.Task, st, sk.OutputHint)}
	if st.NeedsAll() {
		res.Scope = plan.ScopeAll
		j.text, j.whole = r.cfg.Context, true
		res.Slice = &SliceInfo{Matched: []SliceMatch{}, Unmatched: []string{}, Lines: strings.Count(j.text, "\n") + 1}
		res.ContextTokens = r.acct.ContextTokens
		return j
	}
	var cut slice.Result
	if st.ContextPointers.IsEmpty() {
		// What Extract does with no pointers, without its copy of the
		// whole document.
		cut = slice.Result{Fallback: true, Warnings: []string{"no pointers given; the whole document is used"}}
	} else {
		cut = r.doc.Extract(slice.Pointers{Sections: st.ContextPointers.Sections, LineRanges: st.ContextPointers.LineRanges, Passages: st.ContextPointers.Passages})
	}
	info := &SliceInfo{Matched: []SliceMatch{}, Unmatched: append([]string{}, cut.Unmatched...), Misses: cut.Misses, Fallback: cut.Fallback}
	for _, m := range cut.Matched {
		info.Matched = append(info.Matched, SliceMatch{Pointer: m.Pointer, Heading: m.Heading, StartLine: m.StartLine, EndLine: m.EndLine, Bytes: m.Bytes})
	}
	for _, w := range cut.Warnings {
		r.warnf("subtask %d: %s", i+1, w)
	}
	j.text = cut.Text
	switch {
	case cut.Fallback:
		if len(cut.Warnings) == 0 {
			r.warnf("subtask %d: no context pointer matched; sent the full context", i+1)
		}
		j.text, j.whole = r.cfg.Context, true
	case strings.TrimSpace(j.text) == "":
		r.warnf("subtask %d: the slice is empty; sent the full context instead", i+1)
		j.text, j.whole = r.cfg.Context, true
		info.Fallback = true
	}
	j.fallback = j.whole
	if j.fallback {
		j.refused = r.chargeFallback(i)
	}
	info.Lines = strings.Count(j.text, "\n") + 1
	res.Slice = info
	if j.whole {
		res.ContextTokens = r.acct.ContextTokens
	} else {
		j.ct = r.counted(j.text)
		res.ContextTokens = j.ct.Tokens()
	}
	return j
}

// wholeCount counts subtask j's one request over its whole slice without
// building it: the whole context's block is counted once per run, so a
// fallback costs no counting at all.
func (r *run) wholeCount(j *job) int {
	r.setNaive(j)
	if j.whole {
		return j.naive
	}
	return r.systemTokens(j.sk.Name, j.sk.Body) + r.blockTokens(j.ct) + r.count(j.instr)
}

// wholeRequest builds subtask j's one request over its whole slice.
func (r *run) wholeRequest(j *job) *llm.Request {
	return r.subagentRequest(j.sk.Body, userMessage(j.text, j.instr))
}

// fitsWhole checks a request of n tokens over subtask j's whole slice
// against the window before it is built.
func (r *run) fitsWhole(j *job, n int) error {
	return r.fits(fmt.Sprintf("subtask %d", j.i+1), &llm.Request{Model: r.cfg.ModelName, MaxTokens: r.cfg.SubagentMax}, n)
}

// setNaive counts subtask j's naive prompt: its system prompt, the whole
// context's block (counted once per run) and its instruction.
func (r *run) setNaive(j *job) {
	j.naive = r.systemTokens(j.sk.Name, j.sk.Body) + r.naiveBlockTokens() + r.count(j.instr)
}

func (r *run) subagentRequest(system, user string) *llm.Request {
	return &llm.Request{
		Model:       r.cfg.ModelName,
		System:      system,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: user}},
		Temperature: llm.Float(*r.cfg.Temperature),
		MaxTokens:   r.cfg.SubagentMax,
		Stream:      r.cfg.Stream,
	}
}

// userMessage is contextBlock(text)+instr built in one allocation: for the
// whole context that is the largest string a run builds.
func userMessage(text, instr string) string {
	// The wrapping is contextBlockWrap's, which blockTokens counts.
	pre, post := contextBlockWrap(text)
	var b strings.Builder
	b.Grow(len(pre) + len(text) + len(post) + len(instr))
	b.WriteString(pre)
	b.WriteString(text)
	b.WriteString(post)
	b.WriteString(instr)
	return b.String()
}

// estimate fills the accounting of a dry run: every delegated prompt is
// counted, nothing is sent. A subtask that would run map-reduce counts its
// map requests; its reduce requests depend on answers a dry run does not
// have and are left out, with a warning.
func (r *run) estimate() {
	for i := range r.rec.Subtasks {
		if r.rec.Subtasks[i].Mode != ModeDelegated {
			continue
		}
		if err := r.estimateOne(r.cut(i)); err != nil {
			r.warnf("%s; a real run would fail this subtask", oneLine(err))
		}
	}
	r.acct.Estimate = true
	r.acct.NaiveInputTokens += r.acct.PlannerInputTokens
}

func (r *run) estimateOne(j *job) error {
	if j.refused != nil {
		return j.refused
	}
	res := &r.rec.Subtasks[j.i]
	var err error
	if j.st.NeedsAll() {
		r.setNaive(j)
	} else {
		n := r.wholeCount(j)
		if err = r.fitsWhole(j, n); err == nil {
			res.PromptTokens = n
			r.acct.SubagentInputTokens += n
			r.acct.NaiveInputTokens += j.naive
			return nil
		}
	}
	parts, _, perr := r.mapParts(j)
	if perr != nil {
		if err != nil {
			return err
		}
		return perr
	}
	for _, p := range parts {
		mreq, m := r.mapRequest(j, p.Text, r.partLabel(p.Index+1, len(parts), p.StartLine, p.EndLine))
		if ferr := r.fits(fmt.Sprintf("subtask %d map part %d", j.i+1, p.Index+1), mreq, m); ferr != nil {
			res.PromptTokens = 0
			return ferr
		}
		res.PromptTokens += m
	}
	res.Parts, res.MapCalls = len(parts), len(parts)
	r.acct.MapCalls += len(parts)
	r.acct.SubagentInputTokens += res.PromptTokens
	r.acct.NaiveInputTokens += j.naive
	if len(parts) > 1 {
		r.warnf("subtask %d: would run over %d parts; the reduce requests that join them are not in the estimate", j.i+1, len(parts))
	}
	return nil
}

// ---- Phase 3: dispatch ----

// dispatch runs the delegated subtasks, at most Concurrency at a time. Each
// subtask's slice is cut in plan order just before it can start, and its
// request is built only then: a plan of 500 subtasks that all fall back to
// the whole context holds a few requests at a time, not 500. The price is
// that --fail-fast can stop a run only after the subtasks before the
// failing one have started.
func (r *run) dispatch(ctx context.Context) error {
	r.slots = make(chan struct{}, r.cfg.Concurrency)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.Concurrency)
	var failed int
	for i := range r.rec.Subtasks {
		if r.rec.Subtasks[i].Mode != ModeDelegated {
			continue
		}
		if gctx.Err() != nil {
			r.rec.Subtasks[i].Error = "not run: " + r.errText(context.Cause(gctx))
			continue
		}
		j := r.cut(i)
		g.Go(func() error {
			res := &r.rec.Subtasks[i]
			if gctx.Err() != nil {
				res.Error = "not run: " + r.errText(context.Cause(gctx))
				return nil
			}
			t0 := r.cfg.Now()
			sctx, end := r.cfg.Span(gctx, "subtask", res)
			out, err := "", j.refused
			if err == nil {
				out, err = r.runSubtask(sctx, j)
			}
			end(err)
			res.DurationMS = r.cfg.Now().Sub(t0).Milliseconds()
			if err != nil {
				res.Status, res.Error = StatusFailed, r.errText(err)
				r.mu.Lock()
				failed++
				r.mu.Unlock()
				r.cfg.Progress(Event{Index: i, Phase: "dispatch", Status: "failed", Message: res.Error})
				if r.cfg.FailFast || ctx.Err() != nil {
					return fmt.Errorf("subtask %d: %w", i+1, err)
				}
				return nil
			}
			res.Status, res.Output = StatusOK, out
			r.cfg.Progress(Event{Index: i, Phase: "dispatch", Status: "ok", Message: res.Task})
			return nil
		})
	}
	err := g.Wait()
	r.failed = failed
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("cancelled: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("--fail-fast: %w", err)
	}
	return nil
}

// runSubtask runs one delegated subtask: one request over its slice, or
// map-reduce over the slice's parts when the subtask has scope all or the
// slice would not fit the sub-agent's window.
func (r *run) runSubtask(ctx context.Context, j *job) (string, error) {
	res := &r.rec.Subtasks[j.i]
	r.cfg.Progress(Event{Index: j.i, Phase: "dispatch", Status: "running", Message: res.Task})
	if j.st.NeedsAll() {
		r.setNaive(j)
		return r.mapReduce(ctx, j, nil)
	}
	n := r.wholeCount(j)
	if err := r.fitsWhole(j, n); err != nil {
		return r.mapReduce(ctx, j, err)
	}
	res.PromptTokens = n
	var req *llm.Request
	resp, err := r.subCall(ctx, j, callWhole, "", func() (*llm.Request, int, error) {
		req = r.wholeRequest(j)
		return req, n, nil
	})
	if err != nil {
		return "", err
	}
	// A return cut at its limit reads as a whole finding to the synthesis:
	// asked for again with a larger one, or recorded as a gap.
	resp = r.uncutSub(ctx, j, callWhole, "", fmt.Sprintf("subtask %d's return", j.i+1), req, n, resp)
	return resp.Text, nil
}

// Kinds of sub-agent call, for the record's counters.
const (
	callWhole = iota
	callMap
	callReduce
)

// subCall sends one sub-agent request once a call slot is free, and books
// it: the prompt in the accounting (it is sent), the usage in the subtask
// and the run, the call in the map or reduce counter. build makes the
// request and its count only once the slot is taken, so that the requests
// alive at any time are those in flight; an error from build (a request
// over its window) is returned before anything is sent or booked. part is
// the piece of the subtask's slice a map request carries ("" for the
// others): through an engine, the item names it by place, not by copy.
func (r *run) subCall(ctx context.Context, j *job, kind int, part string, build func() (*llm.Request, int, error)) (*llm.Response, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-r.slots }()
	req, n, err := build()
	if err != nil {
		return nil, err
	}
	res := &r.rec.Subtasks[j.i]
	r.mu.Lock()
	r.rec.ModelCalled = true
	r.acct.SubagentInputTokens += n
	if j.fallback {
		r.acct.FallbackInputTokens += n
	}
	if !j.naiveAdded {
		j.naiveAdded = true
		r.acct.NaiveInputTokens += j.naive
	}
	switch kind {
	case callMap:
		res.MapCalls++
		r.acct.MapCalls++
		res.PromptTokens += n
	case callReduce:
		res.ReduceCalls++
		r.acct.ReduceCalls++
		res.PromptTokens += n
	}
	r.mu.Unlock()
	phase := CallSubagent
	switch kind {
	case callMap:
		phase = CallMap
	case callReduce:
		phase = CallReduce
	}
	cctx, done := r.startCall(ctx, phase, j.i, "", n)
	var resp *llm.Response
	switch {
	case r.cfg.Engine != nil && kind == callWhole:
		resp, err = r.remote(cctx, j, req)
	case r.cfg.Engine != nil:
		resp, err = r.remoteCall(cctx, j, req, part)
	default:
		resp, err = generateRecovered(cctx, r.cfg.Model, req)
	}
	done(resp, err)
	if resp != nil {
		r.calib.Observe(int64(n), resp.Usage.PromptTokens())
		r.mu.Lock()
		res.Usage = res.Usage.Add(resp.Usage)
		res.Attempts += resp.Attempts
		r.rec.Usage.Subagents = r.rec.Usage.Subagents.Add(resp.Usage)
		r.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}
