package report

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
)

// askPlan is the plan: who planned and why, then every subtask with its
// skill, mode, status, attempts, tokens and slice, with fallbacks and
// failures marked.
func askPlan(rec *orchestrate.Record) Section {
	var b strings.Builder
	planner := rec.Planner
	if rec.EstimatedPlanner != "" {
		planner += " (a real run would use " + rec.EstimatedPlanner + ")"
	}
	fmt.Fprintf(&b, "<p>Planner: <strong>%s</strong>, mode asked for: %s.</p>", Esc(orEmpty(planner)), Esc(orEmpty(rec.PlannerMode)))
	if rec.PlannerReason != "" {
		if plannerFellBack(rec.PlannerReason) {
			b.WriteString(Warn("Planner fallback: " + rec.PlannerReason))
		} else {
			fmt.Fprintf(&b, "<p>Why: %s</p>", Esc(rec.PlannerReason))
		}
	}
	if rec.Plan != nil && rec.Plan.Reasoning != "" {
		fmt.Fprintf(&b, "<p>The planner's reasoning: %s</p>", Esc(rec.Plan.Reasoning))
	}
	if len(rec.Subtasks) == 0 {
		b.WriteString("<p>The run stopped before it had a plan: there are no subtasks.</p>")
		return Section{ID: "plan", Title: "Plan", Body: b.String()}
	}
	var rows [][]cell
	var notes []string
	for _, s := range rec.Subtasks {
		skill := s.Skill
		if s.ResolvedSkill != "" && s.ResolvedSkill != s.Skill {
			skill += " (ran as " + s.ResolvedSkill + ")"
		}
		status := txt(s.Status)
		if s.Status == orchestrate.StatusFailed {
			status = failCell(s.Status)
		}
		rows = append(rows, []cell{
			num(int64(s.Index + 1)), txt(s.Task), txt(skill), txt(s.Mode), status,
			num(int64(s.Attempts)), num(int64(s.ContextTokens)), num(int64(s.PromptTokens)),
			num(s.Usage.InputTokens), num(s.Usage.OutputTokens), sliceCell(s),
		})
		notes = append(notes, subtaskNotes(s)...)
	}
	b.WriteString(htmlTable("Subtasks in plan order. Tokens: the slice's size, the prompt as counted locally, and what the provider reported.",
		[]string{"#", "Task", "Skill", "Mode", "Status", "Attempts", "Slice tokens", "Prompt tokens", "Reported input", "Reported output", "Slice"}, rows))
	for _, n := range notes {
		b.WriteString(n)
	}
	return Section{ID: "plan", Title: "Plan", Body: b.String()}
}

// plannerFellBack tells a planner_reason that records a fallback (auto's
// choice failing and the retrieval planner running instead).
func plannerFellBack(reason string) bool {
	return strings.Contains(reason, "ran instead") || strings.Contains(reason, "would fail")
}

// sliceCell lists a subtask's pointers and the lines each matched.
func sliceCell(s orchestrate.SubtaskResult) cell {
	if s.Mode != orchestrate.ModeDelegated {
		return txt("answered by the planner")
	}
	if s.Scope == "all" {
		return txt("the whole context (scope all)")
	}
	si := s.Slice
	if si == nil {
		return txt("not cut")
	}
	var parts []string
	for _, m := range si.Matched {
		parts = append(parts, Esc(fmt.Sprintf("%s → lines %d–%d", m.Pointer, m.StartLine, m.EndLine)))
	}
	for _, u := range si.Unmatched {
		parts = append(parts, "<span class=\"fail\">"+Esc(u+" → no match")+"</span>")
	}
	if si.Fallback {
		parts = append(parts, "<span class=\"fail\">fallback: the whole context</span>")
	}
	if len(parts) == 0 {
		return txt("no pointers")
	}
	return cell{html: strings.Join(parts, "<br>")}
}

// subtaskNotes are the highlighted lines of one subtask: its failure, its
// fallback, the pointers that matched nothing and why.
func subtaskNotes(s orchestrate.SubtaskResult) []string {
	var out []string
	n := s.Index + 1
	if s.Status == orchestrate.StatusFailed {
		out = append(out, failLine(fmt.Sprintf("Subtask %d failed: %s", n, orEmpty(s.Error))))
	} else if s.Error != "" {
		out = append(out, Warn(fmt.Sprintf("Subtask %d: %s", n, s.Error)))
	}
	if s.Slice != nil {
		if s.Slice.Fallback {
			out = append(out, Warn(fmt.Sprintf("Subtask %d: slice fallback, the sub-agent was sent the whole context.", n)))
		}
		for _, m := range s.Slice.Misses {
			why := "not found"
			if m.Ambiguous {
				why = "ambiguous"
			}
			if len(m.Candidates) > 0 {
				why += "; candidates: " + strings.Join(m.Candidates, "; ")
			}
			out = append(out, Warn(fmt.Sprintf("Subtask %d: pointer %q matched nothing: %s", n, m.Pointer, why)))
		}
	}
	if s.MapCalls > 0 {
		out = append(out, fmt.Sprintf("<p>Subtask %d ran by map-reduce: %d parts, %d map calls, %d reduce calls in %d rounds.</p>",
			n, s.Parts, s.MapCalls, s.ReduceCalls, s.ReduceRounds))
	}
	return out
}

// failLine is a Warn line in the failure colour.
func failLine(s string) string {
	return "<p class=\"warn fail\" role=\"note\">" + Esc(s) + "</p>"
}

func orEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
