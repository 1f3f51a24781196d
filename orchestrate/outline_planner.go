package orchestrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// outlineSlack is held back from the outline's budget for the few tokens
// the tokenizer may add where the outline meets the prompt around it.
const outlineSlack = 16

// outlineRepairRoom is held back from the outline's budget, up to a quarter
// of it, so that the repair round still fits the window: it sends the
// first request again with the planner's reply and the repair prompt
// (which quotes the reply), about twice a plan of up to 1,000 tokens. An
// outline filling the whole window would leave a plan with one wrong path
// no way to be repaired.
const outlineRepairRoom = 2048

// outlineView is the outline the outline planner reads, and the map from
// its pointers back to lines of the run's context, which is what the
// assembler cuts.
type outlineView struct {
	o    *outline.Outline
	docs []outlineDoc
	// multi is true when the outline has one document per source of a
	// combined context: its paths then begin with the document's name.
	multi bool
	// sections caches the context's sections for ranking lookups.
	sections []plan.SectionText
	// expandable is true when the outline is collapsed, so the planner
	// was told it may ask for the subsections of a few headings first.
	expandable bool
}

// outlineDoc is one document of the outline and where it lies in the
// context.
type outlineDoc struct {
	name string
	// first and last are the document's lines in the context: with
	// several documents, the "# name" heading Combine added and the
	// document's last line.
	first, last int
	// offset turns a line of the document into a line of the context.
	offset int
}

// outlineSources returns one outline source per document. A context that
// slice.Combine made of several sources is split back at the "# name"
// headings it added, so each document is outlined on its own (its paths
// start at its own headings, the outline says its size) and its lines map
// back by a fixed offset. Any other context is one document.
func (r *run) outlineSources() ([]outline.Source, []outlineDoc) {
	if len(r.cfg.Sources) > 1 {
		if srcs, docs, ok := r.splitCombined(); ok {
			return srcs, docs
		}
	}
	name := "context"
	if len(r.cfg.Sources) == 1 && strings.TrimSpace(r.cfg.Sources[0]) != "" {
		name = r.cfg.Sources[0]
	}
	return []outline.Source{{Name: name, Doc: r.doc}}, []outlineDoc{{name: name, first: 1, last: r.doc.NumLines()}}
}

// splitCombined cuts the context at its level-1 headings, which in a
// combined context are exactly the sources' names (Combine moves every
// heading of a file down a level). It reports false when the headings are
// not the sources, in order.
func (r *run) splitCombined() ([]outline.Source, []outlineDoc, bool) {
	var tops []slice.Heading
	for _, h := range r.doc.Outline() {
		if h.Level == 1 {
			tops = append(tops, h)
		}
	}
	if len(tops) != len(r.cfg.Sources) || (len(tops) > 0 && tops[0].Line != 1) {
		return nil, nil, false
	}
	text := r.cfg.Context
	starts := lineStarts(text)
	var srcs []outline.Source
	var docs []outlineDoc
	for i, h := range tops {
		name := strings.Join(strings.Fields(r.cfg.Sources[i]), " ")
		if name == "" {
			name = "untitled"
		}
		if h.Title != name {
			return nil, nil, false
		}
		// The document is a view of the context, not a copy, so that
		// its sections' counts come from the context's index.
		data := ""
		if from, to := h.Line+1, h.EndLine; from <= to && to <= len(starts) {
			end := len(text)
			if to < len(starts) {
				end = starts[to]
			}
			data = text[starts[from-1]:end]
		}
		// By its name, so an .mdx file reads as it does in the whole.
		srcs = append(srcs, outline.Source{Name: name, Doc: slice.ParseNamed(name, data)})
		docs = append(docs, outlineDoc{name: name, first: h.Line, last: h.EndLine, offset: h.Line})
	}
	return srcs, docs, true
}

// lineStarts is the byte offset of each line of s, with the assembler's
// rule: a line ends at '\n' or at a '\r' that no '\n' follows.
func lineStarts(s string) []int {
	if s == "" {
		return nil
	}
	starts := []int{0}
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\n' || (s[i] == '\r' && s[i+1] != '\n') {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// note is what the outline planner is told beyond the outline itself. With
// several documents a line range could be in any of them (the outline's
// lines are each document's own), so ranges are not used and a document is
// pointed at by its name.
func (v *outlineView) note() string {
	if !v.multi {
		return ""
	}
	return fmt.Sprintf("\nThere are %d documents. Every path starts with its document's name, and line numbers are each document's own, so leave \"line_ranges\" empty: to point at a whole document, or at its text before the first heading, give the document's name as a section (for example %q).\n",
		len(v.docs), v.docs[0].name)
}

// outlineRequest builds the outline planner's request, its outline budgeted
// so the request fits the planner model's window: the window less the
// reply's max_tokens, less the margin, less the prompt's own tokens, less
// room for the repair round. A positive limit caps the outline's budget
// lower still: auto's share of the single call.
func (r *run) outlineRequest(limit int) (*outlineView, *llm.Request, int, error) {
	srcs, docs := r.outlineSources()
	v := &outlineView{docs: docs, multi: len(docs) > 1}
	note := v.note()
	in := plan.OutlinePromptInput{Task: r.cfg.Task, Outline: note, Skills: r.skillInfos(), MaxSubtasks: r.cfg.MaxSubtasks, Expand: plan.MaxExpand}
	sys, user := plan.OutlinePlannerPrompt(in)
	fixed := r.count(sys, user)
	w := r.window(r.cfg.PlannerModel)
	budget := int(float64(w.Tokens-max(r.cfg.PlannerMax, 0))/(1+WindowMargin)) - fixed - outlineSlack
	budget -= min(outlineRepairRoom, budget/4)
	if limit > 0 {
		budget = min(budget, limit-fixed)
	}
	var req *llm.Request
	n := 0
	for range 4 {
		if budget <= 0 {
			return nil, nil, 0, fmt.Errorf("the outline planner's prompt alone (%d tokens, %d for the reply) leaves no room for an outline in the %d-token window of %q: %w",
				fixed, r.cfg.PlannerMax, w.Tokens, w.Model, ErrWindow)
		}
		o, err := outline.Build(srcs, r.ctxCounter(), budget)
		if err != nil {
			return nil, nil, 0, err
		}
		v.o = o
		in.Outline = o.Text() + note
		// Only a collapsed outline has anything to expand.
		v.expandable = o.Depth < o.MaxDepth
		in.Expand = 0
		if v.expandable {
			in.Expand = plan.MaxExpand
		}
		sys, user = plan.OutlinePlannerPrompt(in)
		req = r.planRequest(sys, user)
		if v.expandable {
			req.JSONSchema = &llm.Schema{Name: "plan", Schema: plan.OutlineJSONSchema()}
		}
		n = r.requestTokens(req)
		if fitsWindow(n, req.MaxTokens, w.Tokens) {
			return v, req, n, nil
		}
		// The parts joined counted a little more than apart: take the
		// excess off the budget and build again.
		budget = min(budget, o.Tokens) - (n + margin(n) + req.MaxTokens - w.Tokens) - outlineSlack
	}
	return nil, nil, 0, r.fits("outline planner", req, n)
}

// describe says what the outline planner read, for planner_reason.
func (v *outlineView) describe() string {
	o := v.o
	heads := 0
	for _, d := range o.Documents {
		heads += d.Headings
	}
	shown := fmt.Sprintf("all %d headings", heads)
	if o.Depth < o.MaxDepth {
		shown = fmt.Sprintf("%d of %d headings (%d of %d levels)", len(o.Entries), heads, o.Depth, o.MaxDepth)
	}
	leads := "with their first words"
	if !o.Leads {
		leads = "without their first words"
	}
	docs := ""
	if len(o.Documents) > 1 {
		docs = fmt.Sprintf(" of %d documents", len(o.Documents))
	}
	return fmt.Sprintf("the outline it reads%s: %d tokens, %s %s", docs, o.Tokens, shown, leads)
}

// resolve maps an outline pointer to the lines of the context it names:
// a path as the outline spells it, and with several documents also a
// document's name (the whole document) or a path without its document's
// name when one document alone has it.
func (v *outlineView) resolve(pointer string) (first, last int, ok bool) {
	if e, ok := v.o.Lookup(pointer); ok {
		return v.lines(e)
	}
	if !v.multi {
		return 0, 0, false
	}
	key := strings.Join(strings.Fields(pointer), " ")
	for _, d := range v.docs {
		if d.name == key {
			return d.first, d.last, true
		}
	}
	var hit outline.Entry
	hits := 0
	for _, d := range v.docs {
		if e, ok := v.o.Lookup(d.name + outline.Sep + pointer); ok {
			hit, hits = e, hits+1
		}
	}
	if hits == 1 {
		return v.lines(hit)
	}
	return 0, 0, false
}

// resolveTitle is resolve, and else a title or the end of a path that
// names exactly one section at any depth, collapsed or not: a planner that
// saw only the top of a collapsed outline can still name a deeper section
// it knows of by its title. When the pointer names several sections, or
// none, candidates are their paths.
func (v *outlineView) resolveTitle(pointer string) (first, last int, candidates []string, ok bool) {
	if first, last, ok := v.resolve(pointer); ok {
		return first, last, nil, true
	}
	es := v.o.Match(pointer)
	if len(es) == 1 {
		first, last, ok := v.lines(es[0])
		return first, last, nil, ok
	}
	for _, e := range es {
		candidates = append(candidates, v.o.Pointer(e))
	}
	return 0, 0, candidates, false
}

// lookup is resolveTitle as plan.PathsToLines takes it.
func (v *outlineView) lookup(pointer string) (int, int, bool) {
	first, last, _, ok := v.resolveTitle(pointer)
	return first, last, ok
}

func (v *outlineView) lines(e outline.Entry) (int, int, bool) {
	for _, d := range v.docs {
		if d.name == e.Document {
			return e.Line + d.offset, e.EndLine + d.offset, true
		}
	}
	return 0, 0, false
}

// outlinePlan runs the outline planner. Its plan must name only paths of
// the outline (one repair round quotes those it does not); the paths then
// become the line ranges of their sections in the context, so a path cuts
// exactly its section even where the assembler's heading matching would
// find several ("Pricing" under two vendors).
//
// The planner has not read the text, so it may not answer a lookup itself.
// A "self" subtask is not worth a repair round: it becomes a lookup subtask
// on the sections it names or, naming none, on the sections the retrieval
// ranking finds for its question, and the answer it wrote from memory is
// dropped. Each such change is a warning.
func (r *run) outlinePlan(ctx context.Context, c plannerChoice) (*plan.Plan, error) {
	v := c.view
	var selfs []int
	dropped := 0
	check := func(p *plan.Plan) error {
		selfs, dropped = nil, 0
		for i := range p.Subtasks {
			st := &p.Subtasks[i]
			if st.IsSelf() {
				selfs = append(selfs, i)
				st.Skill, st.Answer = plan.LookupSkill, ""
			}
			if v.multi && len(st.ContextPointers.LineRanges) > 0 {
				dropped += len(st.ContextPointers.LineRanges)
				st.ContextPointers.LineRanges = nil
			}
		}
		return plan.CheckOutlinePointers(p, func(path string) ([]string, bool) {
			_, _, cands, ok := v.resolveTitle(path)
			return cands, ok
		})
	}
	p, err := r.modelPlan(ctx, c, check)
	if err != nil {
		return nil, err
	}
	if dropped > 0 {
		r.warnf("the outline planner gave %d line ranges over several documents, whose lines are each document's own; they were dropped", dropped)
	}
	if unknown := plan.PathsToLines(p, v.lookup); len(unknown) > 0 {
		r.warnf("the outline planner named sections that are not paths of the outline (%s); the assembler matched them as headings", strings.Join(quoteAll(unknown), ", "))
	}
	for _, i := range selfs {
		st := &p.Subtasks[i]
		where := "the sections it names"
		if st.ContextPointers.IsEmpty() {
			st.ContextPointers.LineRanges = r.rankedLines(st.Task, v)
			where = "the sections ranked best for its question"
			if len(st.ContextPointers.LineRanges) == 0 {
				where = "the whole context, since no section matched its question"
			}
		}
		r.warnf("plan: subtask %d was answered by the outline planner, which has not read the text; it runs as a %q subtask on %s instead", i+1, plan.LookupSkill, where)
	}
	r.nameRanges(p)
	return p, nil
}

// nameRanges gives back a heading's name to each line range that is
// exactly one section of the context, so the record and the progress show
// which section a sub-agent read: the range becomes the section's unique
// path in the context, but only when the assembler cuts exactly those lines
// with it, with no warning. Any other range stays a range.
func (r *run) nameRanges(p *plan.Plan) {
	byLine := map[[2]int]string{}
	for _, h := range r.doc.Outline() {
		byLine[[2]int{h.Line, h.EndLine}] = h.UniquePath
	}
	for i := range p.Subtasks {
		ptrs := &p.Subtasks[i].ContextPointers
		var keep [][2]int
		for _, lr := range ptrs.LineRanges {
			path, ok := byLine[lr]
			if ok {
				cut := r.doc.Extract(slice.Pointers{Sections: []string{path}})
				ok = len(cut.Matched) == 1 && len(cut.Warnings) == 0 && cut.Matched[0].StartLine == lr[0] && cut.Matched[0].EndLine == lr[1]
			}
			if !ok {
				keep = append(keep, lr)
				continue
			}
			ptrs.Sections = append(ptrs.Sections, path)
		}
		ptrs.LineRanges = keep
	}
}

// rankedLines finds the smallest sections that hold the answer to one
// question, as the retrieval planner ranks them (BM25 over the sections'
// text, a subsection preferred to its parent), as line ranges.
func (r *run) rankedLines(question string, v *outlineView) [][2]int {
	if v.sections == nil {
		v.sections = r.sectionTexts()
	}
	rp := plan.Retrieve(plan.RetrieveInput{Task: question, Sections: v.sections, Skills: r.skillInfos(), MaxSubtasks: 1})
	var ptrs slice.Pointers
	for _, st := range rp.Subtasks {
		ptrs.Sections = append(ptrs.Sections, st.ContextPointers.Sections...)
		ptrs.LineRanges = append(ptrs.LineRanges, st.ContextPointers.LineRanges...)
	}
	if len(ptrs.Sections)+len(ptrs.LineRanges) == 0 {
		return nil
	}
	cut := r.doc.Extract(ptrs)
	if cut.Fallback {
		return nil
	}
	var out [][2]int
	for _, m := range cut.Matched {
		out = append(out, [2]int{m.StartLine, m.EndLine})
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
