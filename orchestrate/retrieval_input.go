package orchestrate

import (
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// RetrievalInput is what the retrieval planner ranks for task over doc, as
// an ask builds it: every section with its text, and the passage index.
// A section larger than slice.LargeSectionBytes is pointed into by its
// passages for a lookup. Skills are left to the caller. The benchmarks use it to measure the
// planner on the input an ask gives it.
func RetrievalInput(doc *slice.Document, task string, maxSubtasks int) plan.RetrieveInput {
	return plan.RetrieveInput{Task: task, Sections: sectionTexts(doc), MaxSubtasks: maxSubtasks, Passages: passageTexts(doc), LargeSectionBytes: slice.LargeSectionBytes}
}
