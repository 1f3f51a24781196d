package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// LookupSkill is the skill an outline-mode plan gives a direct lookup (a
// number, a name, a date, a definition). A planner that read only the
// outline has not seen the text, so it cannot answer a lookup itself: an
// answer written from memory would look like a quote from the document. The
// lookup runs instead on the smallest section that holds the fact.
const LookupSkill = "lookup"

// OutlinePromptInput is what the planner call needs when the document is too
// large for the planner's window and it reads an outline instead.
type OutlinePromptInput struct {
	Task string
	// Outline is the rendered outline: one line per heading path with its
	// line range, its size and its first words (package outline's
	// Outline.Text). Plan does not parse it; it is shown as it is.
	Outline     string
	Skills      []SkillInfo
	MaxSubtasks int // DefaultMaxSubtasks when zero or negative
	// Expand, when positive, tells the planner it may first ask to see
	// the subsections of up to Expand collapsed headings (ParseExpand).
	Expand int
}

// OutlinePlannerPrompt returns the system and user messages of a planner
// call that reads an outline instead of the document. As with PlannerPrompt
// the system message depends only on the skills and the subtask limit, so it
// can be cached; the task comes last.
func OutlinePlannerPrompt(in OutlinePromptInput) (system, user string) {
	max := in.MaxSubtasks
	if max <= 0 {
		max = DefaultMaxSubtasks
	}
	sys := outlineSystem(in.Skills, max)
	if in.Expand > 0 {
		sys += expandNote(in.Expand)
	}
	return sys, outlineUser(in)
}

func outlineSystem(skills []SkillInfo, max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are the planner of baton. The document is too large for you to read, so you are given its outline instead: every heading as a path of titles joined by " > ", the lines its section covers, its size in tokens and the first words of its text. You split the task into subtasks so that each later model call sees only the part of the document it needs.

Produce a plan of 1 to %d subtasks. Use as few subtasks as the task allows: one subtask per distinct question or piece of work. Write each task so it can be done on its own: a sub-agent sees only its task, its skill and its slice of the document, not the original task or the other subtasks.

You have not read the text, so never answer from memory and never use the skill "self". For each subtask choose one skill:
- %q when the answer is a direct lookup (a number, a name, a date, a definition) that needs no reasoning. Point it at the smallest section that holds the fact.
- otherwise a skill from the library below, by its exact name.

For each subtask give context pointers, the smallest set that holds everything the subtask needs:
- "sections": heading paths copied exactly, character for character, from the outline (for example "Part 2 > Pricing > Discounts"). Never shorten a path, never invent one and never write a title without its parents. A section includes its subsections, including those the outline hides, so name the deepest path that is enough and mind the sizes.
- "line_ranges": [start, end] pairs, 1-indexed and inclusive, only for text the outline shows with no heading of its own (such as text before the first heading).
- "passages": passage ids copied from the outline ("p17") or runs of them ("p18-p20"), where the outline lists passages: a document with no headings, or a section too large to send whole (its passages are listed under it; prefer them to the section when the subtask needs only part of it).
Leave all three lists empty only if a subtask truly needs the whole document.

Set "scope": "all" on a subtask whose answer depends on every part of the document, which no outline can locate: counting ("how many times", "how many sections"), listing every instance of something, "which sections mention X", anything that must not miss a part. Its skill then runs over the whole document in parts that fit a sub-agent's window and the partial answers are joined; its pointers are not used. Leave "scope" empty for everything else: a section is cheaper whenever the outline shows where the answer is.

Skill library:
`, max, LookupSkill)
	sorted := slices.Clone(skills)
	slices.SortStableFunc(sorted, func(a, b SkillInfo) int { return cmp.Compare(a.Name, b.Name) })
	if !slices.ContainsFunc(sorted, func(s SkillInfo) bool { return s.Name == LookupSkill }) {
		fmt.Fprintf(&b, "- %s: Find one stated fact in a section and quote it with where it stands.\n", LookupSkill)
	}
	for _, s := range sorted {
		if desc := strings.Join(strings.Fields(s.Description), " "); desc != "" {
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, desc)
		} else {
			fmt.Fprintf(&b, "- %s\n", s.Name)
		}
	}
	b.WriteString(`
Output ONLY this JSON object, with no prose and no code fence:
{"subtasks": [{"task": "what to do, as a self-contained instruction", "skill": "skill name", "context_pointers": {"sections": ["Path > To > Heading"], "line_ranges": []}, "answer": "", "scope": ""}], "reasoning": "one or two sentences on how you split the task"}
Leave "answer" empty: sub-agents answer from the text. "scope" is "all" or empty.`)
	return b.String()
}

func outlineUser(in OutlinePromptInput) string {
	var b strings.Builder
	b.WriteString("<outline>\n")
	b.WriteString(in.Outline)
	if !strings.HasSuffix(in.Outline, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</outline>\n\nTask:\n")
	b.WriteString(strings.TrimSpace(in.Task))
	b.WriteString("\n\nReply with the JSON plan only; every section pointer is a path copied from the outline.")
	return b.String()
}

// CheckOutlinePlan reports what an outline-mode plan may not hold, as a
// *ValidationError to quote back with RepairPrompt (nil when there is
// nothing): a "self" subtask, whose answer could only come from memory, and
// a section pointer that is not a path of the outline (known says which
// are). Run it after Parse, which checks the rest.
func CheckOutlinePlan(p *Plan, known func(path string) bool) error {
	return CheckOutlinePointers(p, func(path string) ([]string, bool) { return nil, known(path) })
}

// CheckOutlinePointers is CheckOutlinePlan for an outline that also
// resolves titles: resolve reports whether a pointer names one section,
// and otherwise the paths it could mean (several for a title that several
// sections have), which the problem lists for the planner to choose from.
func CheckOutlinePointers(p *Plan, resolve func(path string) (candidates []string, ok bool)) error {
	if p == nil {
		return &ValidationError{Problems: []string{"plan is missing"}}
	}
	var probs []string
	for i, st := range p.Subtasks {
		if st.IsSelf() {
			probs = append(probs, fmt.Sprintf("subtask %d: skill is %q, but the document was not read; give it the skill %q and point it at the section that holds the answer", i+1, Self, LookupSkill))
		}
		for _, sec := range st.ContextPointers.Sections {
			cands, ok := resolve(sec)
			switch {
			case ok:
			case len(cands) > 1:
				probs = append(probs, fmt.Sprintf("subtask %d: section %q names %d sections; give the whole path of the one you mean: %s", i+1, sec, len(cands), quoteList(cands)))
			default:
				probs = append(probs, fmt.Sprintf("subtask %d: section %q is not a path in the outline; copy the whole path from the outline", i+1, sec))
			}
		}
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// quoteList quotes up to ten paths, saying how many more there are.
func quoteList(ss []string) string {
	const most = 10
	var b strings.Builder
	for i, s := range ss {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(ss)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", s)
	}
	return b.String()
}

// PathsToLines rewrites each section pointer of p into the line range lookup
// gives it (first and last line, 1-based, inclusive), so the assembler cuts
// exactly the section the outline named: heading matching knows nothing of
// the outline's ordinals ("Notes (2)"). Pointers lookup does not know stay
// sections, and are returned, without duplicates, for the caller to warn
// about. A range already in the plan is not repeated.
func PathsToLines(p *Plan, lookup func(path string) (first, last int, ok bool)) (unknown []string) {
	if p == nil {
		return nil
	}
	seen := map[string]bool{}
	for i := range p.Subtasks {
		ptrs := &p.Subtasks[i].ContextPointers
		var keep []string
		for _, sec := range ptrs.Sections {
			first, last, ok := lookup(sec)
			if !ok {
				keep = append(keep, sec)
				if !seen[sec] {
					seen[sec] = true
					unknown = append(unknown, sec)
				}
				continue
			}
			if r := [2]int{first, last}; !slices.Contains(ptrs.LineRanges, r) {
				ptrs.LineRanges = append(ptrs.LineRanges, r)
			}
		}
		ptrs.Sections = keep
	}
	return unknown
}
