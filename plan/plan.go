// Package plan owns the plan that baton's planner emits: the JSON schema, the
// prompts that ask a model for a plan (and for one repair when the first
// answer is unusable), tolerant parsing of what models actually write,
// validation with problems precise enough to quote back to the model, and a
// deterministic retrieval planner for runs with no model at all.
//
// A plan splits a task into one to a few subtasks. Each subtask is either
// answered inline by the planner (skill "self": a direct lookup that needs no
// reasoning) or delegated to a sub-agent running a named skill on the slice of
// the document its context pointers select. The package deliberately knows
// nothing about markdown sections or the skill library: callers pass plain
// outlines, section texts and skill names, so plan stays a leaf package.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Self is the skill name of a subtask the planner answered itself.
const Self = "self"

// DefaultMaxSubtasks bounds a plan when Options.MaxSubtasks is not set. Six
// keeps skill selection within one pass of the planner's attention and keeps
// fan-out cheap.
const DefaultMaxSubtasks = 6

// Plan is the planner's output. Its JSON field names are a public contract:
// they appear in prompts, in provider structured-output schemas and in run
// records.
type Plan struct {
	Subtasks  []Subtask `json:"subtasks"`
	Reasoning string    `json:"reasoning"`

	// Warnings lists what Parse repaired on its own (an answer dropped from
	// a delegated subtask, an empty section name discarded). They are not
	// worth a repair round-trip but belong in the run record.
	Warnings []string `json:"-"`
}

// Subtask is one unit of work in a plan.
type Subtask struct {
	Task            string   `json:"task"`
	Skill           string   `json:"skill"`
	ContextPointers Pointers `json:"context_pointers"`
	Answer          string   `json:"answer,omitempty"`
	// Scope is ScopeAll when the answer depends on every part of the
	// context (counting, listing, "which sections mention X"): the
	// subtask's skill then runs over all of it, part by part, and the
	// partial answers are joined (map-reduce); its pointers are not used.
	// Empty for a subtask that works on its slice.
	Scope string `json:"scope,omitempty"`
}

// ScopeAll is the Scope of a subtask whose answer needs every part of the
// context: a slice of it would give a wrong count or an incomplete list.
const ScopeAll = "all"

// NeedsAll reports whether the subtask must see every part of the context.
func (s Subtask) NeedsAll() bool { return s.Scope == ScopeAll }

// IsSelf reports whether the planner answered the subtask inline, so no
// sub-agent is needed.
func (s Subtask) IsSelf() bool {
	return strings.EqualFold(strings.TrimSpace(s.Skill), Self)
}

// Pointers select the slice of the document a delegated subtask needs.
// Sections are heading titles as the outline spells them; line ranges are
// 1-indexed and inclusive, for content with no heading.
type Pointers struct {
	Sections   []string `json:"sections"`
	LineRanges [][2]int `json:"line_ranges"`
	// Passages name entries of the document's passage index, for text
	// with no usable heading: "p17", or "p18-p20" for a run of them.
	Passages []string `json:"passages,omitempty"`
}

// IsEmpty reports whether the pointers select nothing, in which case the
// assembler falls back to the whole document.
func (p Pointers) IsEmpty() bool {
	return len(p.Sections) == 0 && len(p.LineRanges) == 0 && len(p.Passages) == 0
}

// MarshalJSON writes empty lists as [] rather than null, because the schema
// declares both fields as arrays and strict structured-output validators (and
// readers of run records) should not have to special-case null.
func (p Pointers) MarshalJSON() ([]byte, error) {
	type plain Pointers // no methods, so no recursion
	q := plain(p)
	if q.Sections == nil {
		q.Sections = []string{}
	}
	if q.LineRanges == nil {
		q.LineRanges = [][2]int{}
	}
	return json.Marshal(q)
}

// MarshalJSON writes an empty plan's subtasks as [] rather than null, for the
// same reason as Pointers.MarshalJSON.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	q := plain(p)
	if q.Subtasks == nil {
		q.Subtasks = []Subtask{}
	}
	return json.Marshal(q)
}

// Options configure parsing and validation.
type Options struct {
	// MaxSubtasks is the most subtasks a plan may have; DefaultMaxSubtasks
	// when zero or negative.
	MaxSubtasks int
	// Lines is the document's line count. When positive, line ranges that
	// end after the last line are rejected; when zero they are not checked.
	Lines int
}

func (o Options) maxSubtasks() int {
	if o.MaxSubtasks <= 0 {
		return DefaultMaxSubtasks
	}
	return o.MaxSubtasks
}

var (
	// ErrInvalidPlan is wrapped by every error that means the planner's
	// output cannot be used as it is. Callers branch on it to send one
	// repair request.
	ErrInvalidPlan = errors.New("invalid plan")
	// ErrNoJSON is wrapped, together with ErrInvalidPlan, when the output
	// holds no JSON object at all (the model answered in prose).
	ErrNoJSON = errors.New("no JSON object in the planner output")
)

// ValidationError lists every problem found in a plan, so that a single
// repair request can ask the model to fix all of them at once.
type ValidationError struct {
	Problems []string
	noJSON   bool
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 0 {
		return ErrInvalidPlan.Error()
	}
	return ErrInvalidPlan.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Unwrap makes errors.Is see ErrInvalidPlan always, and ErrNoJSON when no
// JSON object was found.
func (e *ValidationError) Unwrap() []error {
	if e.noJSON {
		return []error{ErrInvalidPlan, ErrNoJSON}
	}
	return []error{ErrInvalidPlan}
}

// Validate checks a plan in its canonical form: the form Parse returns and
// the form code that builds plans by hand must produce. It returns a
// *ValidationError or nil.
func (p *Plan) Validate(opts Options) error {
	if p == nil {
		return &ValidationError{Problems: []string{"plan is missing"}}
	}
	if probs := p.problems(opts); len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

func (p *Plan) problems(opts Options) []string {
	var probs []string
	max := opts.maxSubtasks()
	switch n := len(p.Subtasks); {
	case n == 0:
		probs = append(probs, "plan has no subtasks; give at least 1")
	case n > max:
		probs = append(probs, fmt.Sprintf("plan has %d subtasks; the maximum is %d, so merge related subtasks", n, max))
	}
	for i, st := range p.Subtasks {
		probs = append(probs, st.problems(i+1, opts)...)
	}
	return probs
}

func (s Subtask) problems(n int, opts Options) []string {
	var probs []string
	add := func(format string, args ...any) {
		probs = append(probs, fmt.Sprintf("subtask %d: ", n)+fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s.Task) == "" {
		add("task is empty")
	}
	skill := strings.TrimSpace(s.Skill)
	switch {
	case skill == "":
		add("skill is empty; name a skill from the library or %q", Self)
	case s.IsSelf() && strings.TrimSpace(s.Answer) == "":
		add("skill is %q but answer is empty; give the answer inline or delegate the subtask to a skill", Self)
	case !s.IsSelf() && s.Answer != "":
		add("answer is set but skill is %q; only %q subtasks carry an answer", skill, Self)
	}
	switch {
	case s.Scope != "" && s.Scope != ScopeAll:
		add("scope is %q; use %q for a subtask that needs every part of the document, or leave it empty", s.Scope, ScopeAll)
	case s.Scope == ScopeAll && s.IsSelf():
		add("scope is %q but skill is %q; a lookup the planner answers needs no parts", ScopeAll, Self)
	}
	for j, sec := range s.ContextPointers.Sections {
		if strings.TrimSpace(sec) == "" {
			add("section %d is empty", j+1)
		}
	}
	for _, id := range s.ContextPointers.Passages {
		if !passageRef.MatchString(id) {
			add("passage %q is not a passage id; name passages as the outline does (p17) or a run of them (p18-p20)", id)
		}
	}
	for _, r := range s.ContextPointers.LineRanges {
		a, b := r[0], r[1]
		switch {
		case a < 1 || b < 1:
			add("line range [%d, %d] is out of range; lines are numbered from 1", a, b)
		case b < a:
			add("line range [%d, %d] is reversed; the start must not be after the end", a, b)
		case opts.Lines > 0 && b > opts.Lines:
			add("line range [%d, %d] ends after the last line of the document (%d)", a, b, opts.Lines)
		}
	}
	return probs
}

// UnknownSkills returns, in plan order and without duplicates, the delegated
// subtasks' skill names that known rejects. An unknown skill is not a parse
// error: the caller runs that subtask with a generic prompt and warns.
func UnknownSkills(p *Plan, known func(string) bool) []string {
	if p == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, st := range p.Subtasks {
		if st.IsSelf() || seen[st.Skill] {
			continue
		}
		seen[st.Skill] = true
		if !known(st.Skill) {
			out = append(out, st.Skill)
		}
	}
	return out
}

// MatchSkill finds the library name a model meant. Models write
// "Fact Extraction", "fact_extraction" and "fact-extraction" for the same
// skill, so the comparison ignores case and treats spaces, hyphens and
// underscores alike. An exact match wins over a folded one.
func MatchSkill(name string, names []string) (string, bool) {
	for _, n := range names {
		if n == name {
			return n, true
		}
	}
	want := foldSkill(name)
	if want == "" {
		return "", false
	}
	for _, n := range names {
		if foldSkill(n) == want {
			return n, true
		}
	}
	return "", false
}

// ResolveSkills rewrites each delegated subtask's skill to the library's
// spelling (see MatchSkill) and returns, without duplicates, the names that
// match nothing.
func (p *Plan) ResolveSkills(names []string) []string {
	var unknown []string
	seen := map[string]bool{}
	for i := range p.Subtasks {
		st := &p.Subtasks[i]
		if st.IsSelf() {
			continue
		}
		if n, ok := MatchSkill(st.Skill, names); ok {
			st.Skill = n
			continue
		}
		if !seen[st.Skill] {
			seen[st.Skill] = true
			unknown = append(unknown, st.Skill)
		}
	}
	return unknown
}

func foldSkill(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case ' ', '\t', '\n', '\r', '-', '_':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
