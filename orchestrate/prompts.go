package orchestrate

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/plan"
)

// synthesisSystem is the synthesis step's system prompt. It never changes
// between runs, so providers can cache it.
const synthesisSystem = `You are the synthesis step of a document-analysis pipeline. A planner split the user's task into subtasks; some were answered directly by the planner and the rest were answered by specialist analysts, each of whom saw only the part of the documents relevant to their subtask. You receive the task and every subtask result in plan order.

Write the final answer to the user's task:
- Build it only from the subtask results. Do not add facts that no result supports.
- Keep the evidence the analysts cited (section names, quotes, figures) where it helps the reader check the answer.
- When results disagree, say so and say which evidence supports which side.
- When a subtask failed or a result says the context lacked what was needed, say plainly which part of the task could not be answered and why. Never paper over a gap.
- Answer the task as asked: match its requested format and length. Do not describe the pipeline, the subtasks or the analysts unless something is missing.`

// subagentUser builds the user message of a delegated subtask. The skill's
// prompt is the system prompt (the stable, cacheable prefix); everything that
// varies per call is here, with the context first and the instruction last so
// the instruction is the most recent thing the model reads.
//
// The message is the context block followed by the instruction. The block
// ends in a blank line and the instruction starts with a letter, so the
// tokenizer splits cleanly between them and the message's count is the sum
// of the two parts' counts; accounting uses that to count the whole context
// once per run instead of once per naive prompt.
func subagentUser(task string, st plan.Subtask, context, hint string) string {
	return contextBlock(context) + subagentInstruction(task, st, hint)
}

func contextBlock(context string) string {
	prefix, suffix := contextBlockWrap(context)
	return prefix + context + suffix
}

func subagentInstruction(task string, st plan.Subtask, hint string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Overall task (for orientation only): %s\n\n", task)
	fmt.Fprintf(&b, "Your subtask: %s\n", st.Task)
	b.WriteString("\nWork only from the context above. If it does not hold what the subtask needs, say so instead of guessing.\n")
	if hint != "" {
		fmt.Fprintf(&b, "\nOutput: %s\n", hint)
	}
	return b.String()
}

// synthesisUser lays out the subtask results in plan order.
func synthesisUser(task string, results []SubtaskResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n\n", task)
	b.WriteString("Subtask results, in plan order:\n")
	for _, r := range results {
		fmt.Fprintf(&b, "\n### Subtask %d — %s (%s)\n", r.Index+1, r.Task, r.describeSource())
		switch {
		case r.Status == StatusFailed:
			fmt.Fprintf(&b, "FAILED: no result. Error: %s\n", r.Error)
		case r.Output == "":
			b.WriteString("(empty result)\n")
		default:
			b.WriteString(strings.TrimRight(r.Output, "\n"))
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nWrite the final answer to the task now.")
	return b.String()
}

func (r SubtaskResult) describeSource() string {
	if r.Mode == ModeSelf {
		return "answered directly by the planner"
	}
	return "analysed with skill " + r.Skill
}
