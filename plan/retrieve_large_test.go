package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// largeInput is the retrieval planner's input for doc as an ask builds it:
// sections, passages with their lines, and the large-section bound.
func largeInput(doc *slice.Document, task string) plan.RetrieveInput {
	var ps []plan.PassageText
	for _, p := range doc.Passages() {
		ps = append(ps, plan.PassageText{ID: p.ID, Text: doc.Text()[p.Start:p.End], Line: p.Line, EndLine: p.EndLine})
	}
	return plan.RetrieveInput{Task: task, Sections: sectionsFromSlice(doc), Passages: ps, LargeSectionBytes: slice.LargeSectionBytes}
}

// inventoryDoc has one section of about 160 kB (about 40,000 tokens): a
// plant inventory, one paragraph per item, between two small sections.
func inventoryDoc() string {
	var b strings.Builder
	b.WriteString("# Plant report\n\n## Summary\n\nThe plant ran all year.\n\n## Inventory\n\n")
	for i := range 400 {
		fmt.Fprintf(&b, "Item %d is stored in hall %d. %s\n\n", i+1, i%7+1, strings.Repeat("It was checked at the last audit and found in order. ", 6))
	}
	b.WriteString("The centrifuge serial number is CX-4471, bought in 2019.\n\n")
	for i := 400; i < 450; i++ {
		fmt.Fprintf(&b, "Item %d is stored in hall %d. %s\n\n", i+1, i%7+1, strings.Repeat("It was checked at the last audit and found in order. ", 6))
	}
	b.WriteString("## Staff\n\nForty people work there.\n")
	return b.String()
}

// A lookup that leads to a section far over the bound is sent the passages
// inside it that hold the answer, not the whole section; a summary of the
// same section still gets all of it.
func TestRetrieveNarrowsLargeSectionToPassages(t *testing.T) {
	src := inventoryDoc()
	doc := slice.ParseString(src)
	p := plan.Retrieve(largeInput(doc, "What is the centrifuge serial number?"))
	if len(p.Subtasks) != 1 {
		t.Fatalf("%d subtasks: %s", len(p.Subtasks), p.Reasoning)
	}
	ptr := p.Subtasks[0].ContextPointers
	if len(ptr.Passages) == 0 || len(ptr.Sections) != 0 {
		t.Fatalf("pointers %+v, want passages only (%s)", ptr, p.Reasoning)
	}
	if !strings.Contains(p.Reasoning, `inside "Inventory"`) {
		t.Errorf("reasoning does not say which section was narrowed: %s", p.Reasoning)
	}
	r := doc.Extract(slice.Pointers{Passages: ptr.Passages})
	if r.Fallback || !strings.Contains(r.Text, "CX-4471") {
		t.Fatalf("passages %v cut %d bytes without the answer", ptr.Passages, len(r.Text))
	}
	inv := doc.Extract(slice.Pointers{Sections: []string{"Inventory"}})
	if len(inv.Text) < 10*slice.LargeSectionBytes/2 || len(r.Text) > 4*slice.MaxPassageBytes {
		t.Errorf("sent %d bytes of a %d-byte section", len(r.Text), len(inv.Text))
	}
	for _, m := range r.Matched {
		if m.StartLine < inv.Matched[0].StartLine || m.EndLine > inv.Matched[0].EndLine {
			t.Errorf("passage %s lines %d-%d outside the section", m.Pointer, m.StartLine, m.EndLine)
		}
	}

	p = plan.Retrieve(largeInput(doc, "Summarise the inventory."))
	if got := p.Subtasks[0].ContextPointers; len(got.Passages) != 0 || len(got.Sections) != 1 {
		t.Errorf("a summary was narrowed: %+v (%s)", got, p.Reasoning)
	}
	// Without the bound (or without passage lines) the section goes whole.
	in := largeInput(doc, "What is the centrifuge serial number?")
	in.LargeSectionBytes = 0
	if got := plan.Retrieve(in).Subtasks[0].ContextPointers; len(got.Passages) != 0 || len(got.Sections) != 1 {
		t.Errorf("narrowed without a bound: %+v", got)
	}
}

// A small section is sent whole as before.
func TestRetrieveKeepsSmallSectionWhole(t *testing.T) {
	doc := slice.ParseString(companyDoc)
	p := plan.Retrieve(largeInput(doc, "What are the supply risks?"))
	if got := p.Subtasks[0].ContextPointers; len(got.Passages) != 0 || len(got.Sections) == 0 {
		t.Errorf("pointers %+v (%s)", got, p.Reasoning)
	}
}
