package state

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/goccy/go-yaml"
)

// Handoff is what one skill step leaves for the next.
type Handoff struct {
	NextSkill         string
	LastStepCompleted string
	OpenDecisions     []string
	RequiredReading   []string
	Context           string
	Decisions         []Decision
}

// Decision is one recorded decision with a pointer to its evidence (a
// file:line, a command or an artifact), kept under handoff.decisions.
type Decision struct {
	Decision string
	Evidence string
	Skill    string
	At       time.Time
}

// HandoffUpdate names the handoff fields to change; a nil field is left as
// it is. For the lists, nil means unchanged and an empty non-nil slice
// clears the list.
type HandoffUpdate struct {
	NextSkill         *string
	LastStepCompleted *string
	OpenDecisions     []string
	RequiredReading   []string
	Context           *string
}

// Cycle is the progress of one flow, kept under <flow>_cycle.
type Cycle struct {
	CurrentStep    string
	NextSkill      string
	CompletedSteps []string
}

// CycleUpdate names the cycle fields to change; nil leaves a field as it
// is, and an empty non-nil CompletedSteps clears the list.
type CycleUpdate struct {
	CurrentStep    *string
	NextSkill      *string
	CompletedSteps []string
}

// Usage is the token usage of one step. It has the same fields as llm.Usage
// so a caller converts with state.Usage(u).
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheReadInputTokens     int64
	CacheCreationInputTokens int64
}

// SkillTiming is the accumulated cost of one skill, kept under
// metrics.skill_timings.<skill>.
type SkillTiming struct {
	Calls        int64
	TotalSeconds float64
	AvgSeconds   float64
	Usage
}

// ErrInvalid: an argument to a cockpit helper is unusable (an empty skill
// or flow name, a negative duration).
var ErrInvalid = errors.New("invalid argument")

// Handoff reads the handoff block. Missing or oddly typed fields read as
// zero values: a hand-edited state file must not stop a run from starting.
func (f *File) Handoff() Handoff {
	m, _ := getIn(f.doc.tree, []string{"handoff"}).(map[string]any)
	h := Handoff{
		NextSkill:         str(m["next_skill"]),
		LastStepCompleted: str(m["last_step_completed"]),
		OpenDecisions:     strs(m["open_decisions"]),
		RequiredReading:   strs(m["required_reading"]),
		Context:           str(m["context"]),
	}
	list, _ := m["decisions"].([]any)
	for _, item := range list {
		dm, ok := item.(map[string]any)
		if !ok {
			continue
		}
		d := Decision{Decision: str(dm["decision"]), Evidence: str(dm["evidence"]), Skill: str(dm["skill"])}
		if t, err := time.Parse(time.RFC3339, str(dm["at"])); err == nil {
			d.At = t
		}
		h.Decisions = append(h.Decisions, d)
	}
	return h
}

// SetHandoff changes the named handoff fields, each in place.
func (f *File) SetHandoff(u HandoffUpdate) error {
	return f.atomically(func(g *File) error {
		type field struct {
			key string
			set bool
			val any
		}
		for _, fl := range []field{
			{"next_skill", u.NextSkill != nil, deref(u.NextSkill)},
			{"last_step_completed", u.LastStepCompleted != nil, deref(u.LastStepCompleted)},
			{"open_decisions", u.OpenDecisions != nil, u.OpenDecisions},
			{"required_reading", u.RequiredReading != nil, u.RequiredReading},
			{"context", u.Context != nil, deref(u.Context)},
		} {
			if !fl.set {
				continue
			}
			if err := g.Set(fl.val, "handoff", fl.key); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddDecision appends d to handoff.decisions. A zero At is stamped with the
// current time, in UTC so that files written on different machines sort.
func (f *File) AddDecision(d Decision) error {
	if d.Decision == "" {
		return fmt.Errorf("state %s: add decision: %w: the decision is empty", f.path, ErrInvalid)
	}
	if d.At.IsZero() {
		d.At = time.Now()
	}
	item := yaml.MapSlice{
		{Key: "decision", Value: d.Decision},
		{Key: "evidence", Value: d.Evidence},
		{Key: "skill", Value: d.Skill},
		{Key: "at", Value: d.At.UTC().Format(time.RFC3339)},
	}
	return f.Append(item, "handoff", "decisions")
}

// Cycle reads <flow>_cycle.
func (f *File) Cycle(flow string) Cycle {
	m, _ := getIn(f.doc.tree, []string{flow + "_cycle"}).(map[string]any)
	return Cycle{
		CurrentStep:    str(m["current_step"]),
		NextSkill:      str(m["next_skill"]),
		CompletedSteps: stepList(m["completed_steps"]),
	}
}

// SetCycle changes the named fields of <flow>_cycle, for a runner moving
// between phases; RecordStep covers the end of an ordinary step.
func (f *File) SetCycle(flow string, u CycleUpdate) error {
	if flow == "" {
		return fmt.Errorf("state %s: set cycle: %w: empty flow name", f.path, ErrInvalid)
	}
	return f.atomically(func(g *File) error {
		cyc := flow + "_cycle"
		if u.CurrentStep != nil {
			if err := g.Set(*u.CurrentStep, cyc, "current_step"); err != nil {
				return err
			}
		}
		if u.NextSkill != nil {
			if err := g.Set(*u.NextSkill, cyc, "next_skill"); err != nil {
				return err
			}
		}
		if u.CompletedSteps != nil {
			return g.Set(u.CompletedSteps, cyc, "completed_steps")
		}
		return nil
	})
}

// SkillTiming reads metrics.skill_timings.<skill>.
func (f *File) SkillTiming(skill string) SkillTiming {
	m, _ := getIn(f.doc.tree, []string{"metrics", "skill_timings", skill}).(map[string]any)
	return SkillTiming{
		Calls:        num(m["calls"]),
		TotalSeconds: float(m["total_seconds"]),
		AvgSeconds:   float(m["avg_seconds"]),
		Usage: Usage{
			InputTokens:              num(m["input_tokens"]),
			OutputTokens:             num(m["output_tokens"]),
			CacheReadInputTokens:     num(m["cache_read_input_tokens"]),
			CacheCreationInputTokens: num(m["cache_creation_input_tokens"]),
		},
	}
}

// RecordStep records that skill completed a step of flow in d using usage;
// it is Record with no summary.
func (f *File) RecordStep(flow, skill string, d time.Duration, usage Usage) error {
	return f.Record(StepRecord{Flow: flow, Skill: skill, Elapsed: d, Usage: usage})
}

// StepRecord is one finished step, for Record.
type StepRecord struct {
	Flow, Skill string
	Elapsed     time.Duration
	Usage       Usage
	// Summary is what the step reported. It replaces a multi-line
	// handoff.last_step_completed (see Record); a one-line value gets the
	// skill's name, as it always has.
	Summary string
	// Listed says the step appended its skill to completed_steps itself,
	// as an external agent keeping the cockpit by hand does, so baton does
	// not list it twice.
	Listed bool
	// KeepLastStep says the step wrote handoff.last_step_completed
	// itself; its words are left as they are.
	KeepLastStep bool
}

// Record records a finished step: it appends the skill to
// <flow>_cycle.completed_steps in the shape the file keeps it (a list, or
// one comma-separated string that grows as a string), makes it the cycle's
// current_step, copies handoff.next_skill (if set) to the cycle's
// next_skill so either place gives the same answer, sets
// handoff.last_step_completed, and adds the call, its seconds (to the
// millisecond) and its tokens to metrics.skill_timings.<skill>. Where the
// file keeps a multi-line summary in last_step_completed, the step's
// summary goes there in the same block style; otherwise the skill's name.
// All of it happens or none of it does.
func (f *File) Record(r StepRecord) error {
	flow, skill, d, usage := r.Flow, r.Skill, r.Elapsed, r.Usage
	switch {
	case flow == "":
		return fmt.Errorf("state %s: record step: %w: empty flow name", f.path, ErrInvalid)
	case skill == "":
		return fmt.Errorf("state %s: record step: %w: empty skill name", f.path, ErrInvalid)
	case d < 0:
		return fmt.Errorf("state %s: record step %s: %w: negative duration %s", f.path, skill, ErrInvalid, d)
	}
	return f.atomically(func(g *File) error {
		cyc := flow + "_cycle"
		if !r.Listed {
			if err := g.appendStep(skill, cyc, "completed_steps"); err != nil {
				return err
			}
		}
		if err := g.Set(skill, cyc, "current_step"); err != nil {
			return err
		}
		if next := g.Handoff().NextSkill; next != "" {
			if err := g.Set(next, cyc, "next_skill"); err != nil {
				return err
			}
		}
		if !r.KeepLastStep {
			if err := g.setLastStep(skill, r.Summary); err != nil {
				return err
			}
		}
		t := g.SkillTiming(skill)
		t.Calls++
		t.TotalSeconds = roundMillis(t.TotalSeconds + d.Seconds())
		t.AvgSeconds = roundMillis(t.TotalSeconds / float64(t.Calls))
		t.InputTokens += usage.InputTokens
		t.OutputTokens += usage.OutputTokens
		t.CacheReadInputTokens += usage.CacheReadInputTokens
		t.CacheCreationInputTokens += usage.CacheCreationInputTokens
		base := []string{"metrics", "skill_timings", skill}
		for _, kv := range []struct {
			key string
			val any
		}{
			{"calls", t.Calls},
			{"total_seconds", t.TotalSeconds},
			{"avg_seconds", t.AvgSeconds},
			{"input_tokens", t.InputTokens},
			{"output_tokens", t.OutputTokens},
			{"cache_read_input_tokens", t.CacheReadInputTokens},
			{"cache_creation_input_tokens", t.CacheCreationInputTokens},
		} {
			if err := g.Set(kv.val, append(base, kv.key)...); err != nil {
				return err
			}
		}
		return nil
	})
}

// atomically applies several edits to a copy and keeps them only if all
// succeed.
func (f *File) atomically(fn func(*File) error) error {
	g := *f
	if err := fn(&g); err != nil {
		return err
	}
	*f = g
	return nil
}

func roundMillis(s float64) float64 { return math.Round(s*1000) / 1000 }

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// str reads a scalar as text; a hand-written number or boolean still reads.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any, []any:
		return ""
	}
	return fmt.Sprint(v)
}

// strs reads a list of scalars; a single scalar reads as a list of one.
func strs(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, e := range x {
			if s := str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := str(v); s != "" {
		return []string{s}
	}
	return nil
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		if x > math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(x)
	case int:
		return int64(x)
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func float(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	case string:
		n, _ := strconv.ParseFloat(x, 64)
		return n
	}
	return 0
}
