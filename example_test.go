package baton_test

import (
	"context"
	"fmt"
	"log"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/llm/llmtest"
)

// Ask with a provider: here a fake Anthropic endpoint, reached through the
// environment as a real one would be (ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL). On a document this size the default planner finds
// that no plan would send less than one call with the whole context, and
// answers in that one call.
func ExampleAsk() {
	srv := llmtest.New(llmtest.Always(llmtest.Text("A retry storm exhausted the connection pool.")))
	defer srv.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()}

	res, err := baton.Ask(context.Background(), baton.AskRequest{
		Task:      "What caused the outage?",
		Documents: []string{"examples/incident-report.md"},
		NoSave:    true, // the record is not written under .baton/runs
	}, baton.WithEnv(func(k string) string { return env[k] }))
	if err != nil {
		log.Fatal(err)
	}
	rec := res.Record
	fmt.Println(rec.Status, rec.Provider, rec.Model, rec.Planner)
	fmt.Println(rec.Answer)
	// Output:
	// ok anthropic claude-sonnet-4-5 direct
	// A retry storm exhausted the connection pool.
}

// A dry run calls no model: a retrieval planner builds the plan, the
// assembler cuts the slices, and the record holds the token estimate
// against one plain call.
func ExampleAsk_dryRun() {
	res, err := baton.Ask(context.Background(), baton.AskRequest{
		Task:      "List the action items and who owns them",
		Documents: []string{"examples/incident-report.md"},
		Planner:   "retrieval",
		DryRun:    true,
		NoSave:    true,
	})
	if err != nil {
		log.Fatal(err)
	}
	rec := res.Record
	a := rec.Accounting
	fmt.Println(rec.Status, rec.DryRun, rec.Planner)
	fmt.Println("slices smaller than the context:", a.SubagentInputTokens < a.SingleCallInputTokens)
	for _, s := range rec.Subtasks {
		fmt.Printf("%s: %s\n", s.Skill, s.Slice.Matched[0].Heading)
	}
	// Output:
	// dry_run true retrieval
	// slices smaller than the context: true
	// fact-extraction: 9. Action items
}
