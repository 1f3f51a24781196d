package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// A document nesting list items past the structure pass's bound is still
// planned and sliced; the record says the deeper part was read as text.
func TestAskRecordsCappedNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Inventory\n\n")
	for i := range 200 {
		b.WriteString(strings.Repeat(" ", 2*i) + "- pump housing\n")
	}
	b.WriteString("\n# Maintenance\n\nThe pumps are checked weekly.\n")
	rec, err := orchestrate.Ask(context.Background(), orchestrate.Config{
		Task: "How often are the pumps checked?", Context: b.String(), DryRun: true,
	})
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	found := false
	for _, w := range rec.Warnings {
		found = found || strings.Contains(w, "deeper than 32 levels")
	}
	if !found {
		t.Errorf("no warning of the cut in %q", rec.Warnings)
	}
	var titles []string
	for _, d := range rec.DocumentMap {
		for _, s := range d.Sections {
			titles = append(titles, s.Title)
		}
	}
	if strings.Join(titles, "|") != "Inventory|Maintenance" {
		t.Errorf("sections %q", titles)
	}
}

// A document with more headings than the structure pass takes is still
// planned; the record says how many were read as text.
func TestAskRecordsHeadingsCut(t *testing.T) {
	var b strings.Builder
	for i := range slice.MaxHeadings + 7 {
		fmt.Fprintf(&b, "# Part %d\n", i)
	}
	rec, err := orchestrate.Ask(context.Background(), orchestrate.Config{
		Task: "What does part 42 say?", Context: b.String(), DryRun: true,
	})
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	want := fmt.Sprintf("7 headings more than the %d", slice.MaxHeadings)
	found := false
	for _, w := range rec.Warnings {
		found = found || strings.Contains(w, want)
	}
	if !found {
		t.Errorf("no warning %q in %q", want, rec.Warnings)
	}
}

// A dry run cancelled once planning has begun (after the structure pass
// and the count, the steps that already stop on a cancel) ends with the
// cancellation and no plan, instead of planning a document that may take
// seconds to rank.
func TestAskCancelledWhenPlanning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := orchestrate.Ask(ctx, orchestrate.Config{
		Task: "What does part 2 say?", Context: "# Part 1\n\nOne.\n\n# Part 2\n\nTwo.\n", DryRun: true,
		Progress: func(e orchestrate.Event) {
			if e.Phase == "plan" && e.Status == "running" {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Ask: %v, want the cancellation", err)
	}
	if rec == nil || rec.Plan != nil {
		t.Errorf("record %+v, want no plan", rec)
	}
}

// An ask cancelled before or during its structure pass ends with the
// cancellation, plans nothing and calls no model.
func TestAskCancelledInStructurePass(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, err := orchestrate.Ask(ctx, orchestrate.Config{Task: "What?", Context: "# A\n\ntext\n", DryRun: true})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Ask: %v, want the cancellation", err)
	}
	if rec == nil || rec.Plan != nil || len(rec.Calls) != 0 || rec.Error == "" {
		t.Errorf("record %+v", rec)
	}
}
