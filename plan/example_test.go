package plan_test

import (
	"errors"
	"fmt"

	"github.com/baton-dev/baton/plan"
)

func ExampleParse() {
	reply := "Here is the plan:\n```json\n" + `{"subtasks": [
  {"task": "When was Acme founded?", "skill": "Self", "answer": 1998},
  {"task": "Compare the pricing models.", "skill": "Analytical Comparison", "context_pointers": {"sections": "Pricing", "line_ranges": ["40-52"]}}
], "reasoning": "one lookup, one comparison"}` + "\n```"
	p, err := plan.Parse(reply, plan.Options{Lines: 60})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range p.Subtasks {
		fmt.Printf("%s | %s | %q %v | %s\n", st.Task, st.Skill, st.ContextPointers.Sections, st.ContextPointers.LineRanges, st.Answer)
	}
	// Output:
	// When was Acme founded? | self | [] [] | 1998
	// Compare the pricing models. | analytical-comparison | ["Pricing"] [[40 52]] |
}

func ExampleParse_repair() {
	reply := `{"subtasks": [{"task": "Why did sales fall?", "skill": "", "context_pointers": {"line_ranges": [[50, 80]]}}]}`
	_, err := plan.Parse(reply, plan.Options{Lines: 60})
	if errors.Is(err, plan.ErrInvalidPlan) {
		// Send this once as a follow-up user message, then parse again.
		_ = plan.RepairPrompt(reply, err)
		fmt.Println(err)
	}
	// Output:
	// invalid plan: subtask 1: skill is empty; name a skill from the library or "self"; subtask 1: line range [50, 80] ends after the last line of the document (60)
}
