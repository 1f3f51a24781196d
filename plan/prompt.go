package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// OutlineEntry is one heading of the document, with the lines its section
// covers (1-indexed, inclusive).
type OutlineEntry struct {
	Level   int
	Title   string
	Line    int
	EndLine int
	// Path names the heading alone ("Globex > Pricing"); the outline shows
	// it where a title repeats, since a repeated bare title is ambiguous
	// and selects nothing.
	Path string
}

// SkillInfo is what the planner sees of a skill: its name and description,
// never its full instructions, which only the sub-agent needs.
type SkillInfo struct {
	Name        string
	Description string
}

// PromptInput is everything the planner call needs.
type PromptInput struct {
	Task          string
	Outline       []OutlineEntry
	Skills        []SkillInfo
	MaxSubtasks   int // DefaultMaxSubtasks when zero or negative
	DocumentLines int
	// Context is the full document. The planner reads it once so that it
	// can answer lookups itself and point sub-agents at the right slices.
	Context string
	// Passages is the document's passage index, which must tile Context.
	// A document with no headings is shown passage by passage, each after
	// its id, since passages are then what a pointer can name (a long
	// line has no line range worth citing).
	Passages []PassageText
}

// PlannerPrompt returns the system and user messages of the planner call.
//
// The system message depends only on the skill library and the subtask
// limit, with skills sorted by name, so providers can cache it across tasks.
// The user message carries the outline (with line numbers), the document and
// then the task, last, where long-context models attend to it best.
//
// The document is sent without line numbers when it has headings: numbering
// every line adds tokens, and the outline already gives the line span of each
// section. A document with no headings at all is numbered, because line
// ranges are then the only way to point into it.
func PlannerPrompt(in PromptInput) (system, user string) {
	max := in.MaxSubtasks
	if max <= 0 {
		max = DefaultMaxSubtasks
	}
	return plannerSystem(in.Skills, max), plannerUser(in)
}

func plannerSystem(skills []SkillInfo, max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are the planner of baton. You read a document and a task once, and split the task into subtasks so that each later model call sees only the part of the document it needs.

Produce a plan of 1 to %d subtasks. Use as few subtasks as the task allows: one subtask per distinct question or piece of work, never one per sentence of the document. Write each task so it can be done on its own: a sub-agent sees only its task, its skill and its slice of the document, not the original task or the other subtasks.

For each subtask choose one skill:
- "self" when the answer is a direct lookup (a number, a name, a date, a definition) that needs no reasoning, analysis or comparison. You have read the document, so write the answer in the "answer" field. Do not delegate such lookups.
- otherwise a skill from the library below, by its exact name. A sub-agent running that skill will do the work.

For each delegated subtask give context pointers, the smallest set that holds everything the subtask needs:
- "sections": heading titles copied exactly from the outline. Prefer these. A section includes its subsections, so name a subsection when it is enough. Where a title appears more than once, the outline gives its path in brackets: cite that path ("Globex > Pricing"), since the bare title would select nothing.
- "line_ranges": [start, end] pairs, 1-indexed and inclusive, only for content that has no heading of its own.
- "passages": for a document shown as passages because it has no headings, passage ids as the document marks them ("p17") or runs of them ("p18-p20").
If a subtask truly needs the whole document, leave all three lists empty.

Set "scope": "all" on a delegated subtask whose answer depends on every part of the document, so that no slice can hold it: counting ("how many times", "how many sections"), listing every instance of something, "which sections mention X", anything that must not miss a part. Its skill then runs over the whole document in parts and the partial answers are joined, so it works on documents of any size; its pointers are not used. Leave "scope" empty for everything else: a slice is cheaper whenever the answer sits in known sections.

Skill library:
`, max)
	sorted := slices.Clone(skills)
	slices.SortStableFunc(sorted, func(a, b SkillInfo) int { return cmp.Compare(a.Name, b.Name) })
	if len(sorted) == 0 {
		b.WriteString("(no skills are installed; use \"self\" only when the answer is a lookup, otherwise name the kind of work in a few words)\n")
	}
	for _, s := range sorted {
		desc := strings.Join(strings.Fields(s.Description), " ")
		if desc == "" {
			fmt.Fprintf(&b, "- %s\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, desc)
	}
	b.WriteString(`
Output ONLY this JSON object, with no prose and no code fence:
{"subtasks": [{"task": "what to do, as a self-contained instruction", "skill": "skill name or self", "context_pointers": {"sections": ["Heading"], "line_ranges": [[12, 40]]}, "answer": "only for self subtasks", "scope": ""}], "reasoning": "one or two sentences on how you split the task"}
Omit "answer" (or leave it empty) for delegated subtasks; "scope" is "all" or empty.`)
	return b.String()
}

func plannerUser(in PromptInput) string {
	var b strings.Builder
	b.WriteString("Outline (heading: lines):\n")
	byPassage := len(in.Outline) == 0 && len(in.Passages) > 0
	switch {
	case byPassage:
		b.WriteString("(the document has no headings; it is shown as passages, each after its id in brackets such as [p1]; point into it with passages)\n")
	case len(in.Outline) == 0:
		b.WriteString("(the document has no headings; point into it with line ranges)\n")
	default:
		if first := in.Outline[0].Line; first > 1 && preambleHasText(in.Context, first) {
			fmt.Fprintf(&b, "(text before the first heading: lines 1-%d)\n", first-1)
		}
		repeats := map[string]int{}
		for _, e := range in.Outline {
			repeats[strings.ToLower(e.Title)]++
		}
		for _, e := range in.Outline {
			indent := strings.Repeat("  ", max(e.Level-1, 0))
			path := ""
			if repeats[strings.ToLower(e.Title)] > 1 && e.Path != "" && e.Path != e.Title {
				path = " [" + e.Path + "]"
			}
			fmt.Fprintf(&b, "%s%s %s%s: lines %d-%d\n", indent, strings.Repeat("#", max(e.Level, 1)), e.Title, path, e.Line, e.EndLine)
		}
	}
	lines := in.DocumentLines
	if lines <= 0 {
		lines = countLines(in.Context)
	}
	fmt.Fprintf(&b, "\n<document lines=\"%d\">\n", lines)
	doc := in.Context
	switch {
	case byPassage:
		doc = markPassages(in.Passages)
	case len(in.Outline) == 0:
		doc = numberLines(doc)
	}
	b.WriteString(doc)
	if !strings.HasSuffix(doc, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</document>\n\nTask:\n")
	b.WriteString(strings.TrimSpace(in.Task))
	b.WriteString("\n\nReply with the JSON plan only.")
	return b.String()
}

// markPassages writes each passage after its id in brackets, on a line of
// its own.
func markPassages(ps []PassageText) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("[" + p.ID + "] ")
		b.WriteString(strings.TrimRight(p.Text, " \t\r\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// preambleHasText reports whether any line before line first holds text, so
// the outline mentions the preamble only when there is one.
func preambleHasText(doc string, first int) bool {
	for i, line := range strings.Split(doc, "\n") {
		if i+1 >= first {
			return false
		}
		if strings.TrimSpace(line) != "" {
			return true
		}
	}
	return false
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func numberLines(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	width := len(strconv.Itoa(len(lines)))
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%*d| %s\n", width, i+1, l)
	}
	return b.String()
}

// maxRepairEcho bounds how much of a failed reply RepairPrompt quotes: a
// runaway reply should not make the repair call cost more than the plan.
const maxRepairEcho = 8000

// RepairPrompt returns the user message that asks the planner, once, to fix
// its previous reply. It is sent as a follow-up in the same conversation
// (after the original system and user messages), so it does not repeat the
// document.
func RepairPrompt(raw string, err error) string {
	var b strings.Builder
	b.WriteString("Your previous reply could not be used as a plan.\n\nProblems:\n")
	var ve *ValidationError
	switch {
	case errors.As(err, &ve) && len(ve.Problems) > 0:
		for _, p := range ve.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	case err != nil:
		fmt.Fprintf(&b, "- %s\n", err)
	default:
		b.WriteString("- the reply was not a valid plan\n")
	}
	echo := raw
	if len(echo) > maxRepairEcho {
		echo = strings.ToValidUTF8(echo[:maxRepairEcho], "") + "\n[... cut ...]"
	}
	b.WriteString("\nYour previous reply:\n<previous_reply>\n")
	b.WriteString(echo)
	if !strings.HasSuffix(echo, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</previous_reply>\n\nReply with ONLY the corrected JSON plan, fixing every problem above. Keep the parts that were right.")
	return b.String()
}

// JSONSchema returns the plan's JSON Schema for providers' structured output.
// It follows the strict subset those providers accept: every property is
// required and no others are allowed, so "answer" is required and is the
// empty string for delegated subtasks (Parse accepts that). Numeric and
// length constraints are left out (Anthropic rejects "minimum" and any
// minItems but 0 or 1), and the subtask maximum is configurable: both are
// stated in the prompt and enforced by validation instead.
func JSONSchema() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"subtasks", "reasoning"},
		"properties": map[string]any{
			"subtasks": map[string]any{
				"type":     "array",
				"minItems": 1,
				"items": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"required":             []any{"task", "skill", "context_pointers", "answer", "scope"},
					"properties": map[string]any{
						"task":  str("What to do, as a self-contained instruction."),
						"skill": str(`A skill name from the library, or "self" for a direct lookup answered inline.`),
						"context_pointers": map[string]any{
							"type":                 "object",
							"additionalProperties": false,
							"required":             []any{"sections", "line_ranges", "passages"},
							"properties": map[string]any{
								"sections": map[string]any{
									"type":        "array",
									"description": "Heading titles copied exactly from the outline.",
									"items":       map[string]any{"type": "string"},
								},
								"line_ranges": map[string]any{
									"type":        "array",
									"description": "[start, end] pairs, 1-indexed and inclusive, for content with no heading.",
									"items": map[string]any{
										"type":        "array",
										"description": "[start, end]",
										"items":       map[string]any{"type": "integer"},
									},
								},
								"passages": map[string]any{
									"type":        "array",
									"description": `Passage ids copied from the outline ("p17") or runs of them ("p18-p20"), for text with no heading.`,
									"items":       map[string]any{"type": "string"},
								},
							},
						},
						"answer": str(`The answer, for "self" subtasks only; empty otherwise.`),
						"scope": map[string]any{
							"type":        "string",
							"enum":        []any{ScopeAll, ""},
							"description": `"all" when the answer depends on every part of the document (counting, listing every X, which sections mention X): the skill then runs over all of it; empty otherwise.`,
						},
					},
				},
			},
			"reasoning": str("One or two sentences on how the task was split."),
		},
	}
}
