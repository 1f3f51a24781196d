// Package baton is the front door of baton: one call that answers a task
// over documents the way `baton ask` does, for programs that use baton as
// a library. The command line, the MCP server and the benchmarks call it
// too, so a library caller gets what they get.
//
// Ask resolves the provider from the request or the environment
// (ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or a local Ollama),
// wraps it in baton's retry policy, limits and timeouts (Stack), checks
// every request against its model's window, prices the run, saves its
// record under .baton/runs and adds it to the run history, and traces it
// when an OTLP endpoint is set:
//
//	res, err := baton.Ask(ctx, baton.AskRequest{
//		Task:      "What caused the outage and what should change?",
//		Documents: []string{"examples/incident-report.md"},
//	})
//	if err != nil && res == nil {
//		log.Fatal(err) // the request or the setup; nothing was paid for
//	}
//	fmt.Println(res.Record.Answer)
//
// With an error and a result, the run happened: orchestrate.ErrPartial is
// an answer with gaps (res.Record.Warnings says which), and the record
// keeps what was paid for. DryRun plans and slices without calling a
// model and returns the token estimate in res.Record.Accounting.
//
// Options change where things come from and go: WithClient for a provider
// client built by hand (still retried and limited), WithEnv for another
// environment, WithEvents for progress, retries and the streamed answer,
// WithRecorder for where the record is saved, WithTracer and WithEngine.
// NewModel and Stack build the model stack alone, for code that calls a
// model itself.
//
// Run is the same front door for skill workflows: it runs or resumes a
// workflow as `baton run` and `baton resume` do, with the same options for
// the model, and WithRunEvents and WithRunHistory for its progress and the
// run history.
package baton
