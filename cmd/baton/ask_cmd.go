package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/batondir"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/baton-dev/baton/document"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/telemetry"
	"github.com/baton-dev/baton/tokens"
)

func init() { register(newAskCmd) }

type askFlags struct {
	docs         []string
	models       modelFlags
	plannerModel string
	planner      string
	concurrency  int
	maxSubtasks  int
	maxFallback  int
	skills       []string
	json         bool
	output       string
	dryRun       bool
	failFast     bool
	stream       bool
	subagentMax  int
	window       int
	runsDir      string
	noSave       bool
	prices       string
	engine       string
	databaseURL  string
}

func newAskCmd() *cobra.Command {
	var f askFlags
	cmd := &cobra.Command{
		Use:   "ask [flags] TASK",
		Short: "Answer a task over documents: plan once, slice per subtask, run sub-agents in parallel, synthesise",
		Long: `ask answers TASK over the documents given with --doc.

A planner reads the documents once and writes a plan of subtasks. Direct
lookups are answered by the planner itself; every other subtask goes to a
sub-agent that sees only its slice of the documents, cut by section heading
or line range with no model call. The results are synthesised into one answer.

The run record (--json, and saved under .baton/runs/<id>.json) shows the plan,
every subtask, the usage each provider reported, its cost in dollars at list
prices (cost_usd; --prices corrects them) and how many input tokens the run
saved against sending the whole context to every sub-agent.

No request is sent that would not fit its model's window (the known window
of the model, or --window), counted locally with a 10% margin plus the
tokens reserved for the reply.

The planner (--planner): full reads the whole context; outline reads only
the documents' outline (every heading as a unique path, its lines, its size
and its first words, collapsed to fit the window), so documents many times
the window can be planned, and its lookups go to sub-agents since it has not
read the text; retrieval ranks sections with no model call. auto (the
default) runs full while its request takes at most half the planner's window
(after the margin and the reply) and outline past that. Under auto a planner
that gives no valid plan after its repair round, or cannot run (an outline
too large even at its top level), gives way to the retrieval planner with a
warning; planner_reason in the record says which ran and why, with the
figures. Asked for by name, full or outline ends the run with exit 1
instead. A sub-agent whose slice would not fit fails without being sent; so
does a synthesis.

--stream writes the answer to stdout as the synthesis writes it (progress
stays on stderr) and does not print it again; if the synthesis is retried
after part of it was shown, stderr says so and the answer is printed again
from the start. --output stream-json prints one JSON object per line as the
run goes (phases, subtasks, retries, the usage of every call, with --stream
the answer's pieces) and the run record last, for tools to follow a run;
docs/ask.md lists the fields. --json (--output json) keeps stdout one JSON
document, with or without --stream.

Against Ollama every request names the window it is checked against
(num_ctx): --window, or the model's known window up to 32768 tokens, never
more than the model's own context length.

Without a provider (or with --dry-run) no model is called: a retrieval planner
builds the plan, the assembler cuts the slices, and baton prints how the input
it would send compares with one plain call (the task and the whole context),
then the plan, the slice sizes and a token estimate.

A synthesis or reduce reply cut at its max_tokens is asked for once more with
twice the limit where the window has room; otherwise the run is partial.

Exit codes: 0 ok, 1 error, 2 usage, 3 partial (some subtasks failed or a reply
stayed cut at its token limit; the warnings say what is missing), 4 internal
error, 130 interrupted.`,
		Example: `  baton ask --doc examples/incident-report.md "What caused the outage and what should change?"
  baton ask --doc docs/ --provider openai --model gpt-4o-mini --json "Compare the two designs"
  cat notes.md | baton ask --doc - --dry-run "Summarise the decisions"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("ask takes one TASK argument (quote it), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAsk(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.docs, "doc", nil, "document: a file, a folder (its markdown and text files), or - for stdin (repeatable)")
	f.models.register(fl)
	fl.StringVar(&f.plannerModel, "planner-model", "", "model for the planner (default: --model)")
	fl.StringVar(&f.planner, "planner", orchestrate.PlannerAuto, "planner: auto (by cost against the single call: full under 2,000 tokens of context, outline when its request and the expected sub-agents stay well under the single call, else one direct call with the whole context; retrieval if the chosen planner fails), full or llm (a model call over the whole context), outline (a model call over the documents' outline), retrieval (ranks sections, no model call)")
	fl.IntVar(&f.window, "window", 0, "context window of the models in tokens (0: baton's table of known models); no request over it is sent")
	fl.IntVar(&f.concurrency, "concurrency", orchestrate.DefaultConcurrency, "sub-agents in flight at once (with --engine dbos: sub-agent calls queued at once, by default all of the plan's; the workers' --concurrency bounds how many run)")
	fl.IntVar(&f.maxSubtasks, "max-subtasks", orchestrate.DefaultMaxSubtasks, "most subtasks a plan may have")
	fl.StringArrayVar(&f.skills, "skills", nil, "folder of custom skills; overrides built-ins by name (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the run record as JSON on stdout (the same as --output json)")
	fl.StringVar(&f.output, "output", "", "what stdout gets: text (the answer), json (the run record) or stream-json (one JSON event per line as the run goes, the record last)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "plan and slice without calling a model; print the plan and a token estimate")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop at the first subtask that fails instead of answering with what succeeded")
	fl.BoolVar(&f.stream, "stream", false, "write the answer to stdout as it is written (with --output stream-json, as text events); every request uses the providers' streaming endpoints. With --json stdout stays one JSON document")
	fl.IntVar(&f.maxFallback, "max-fallback-tokens", 0, "most tokens of context that subtasks whose pointers all missed may send in one ask by falling back to the whole context; past it such a subtask fails (0: one single call's worth; -1: no ceiling)")
	fl.IntVar(&f.subagentMax, "subagent-max-tokens", orchestrate.DefaultSubagentTokens, "bound on each sub-agent's return, in tokens")
	fl.StringVar(&f.runsDir, "runs-dir", ".baton/runs", "where run records are saved")
	fl.BoolVar(&f.noSave, "no-save", false, "do not save the run record")
	fl.StringVar(&f.engine, "engine", "local", "where the sub-agent calls run: local (this process) or dbos (durable work on PostgreSQL, taken by baton worker processes)")
	fl.StringVar(&f.databaseURL, "database-url", "", "PostgreSQL URL of the dbos engine (default $BATON_DATABASE_URL)")
	fl.StringVar(&f.prices, "prices", pricing.DefaultPath(os.Getenv), "YAML file of prices per million tokens that corrects the built-in list prices (default $"+pricing.EnvFile+", else prices.yaml in baton's config folder when it exists)")
	return cmd
}

func runAsk(cmd *cobra.Command, f askFlags, task string) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	switch {
	case strings.TrimSpace(task) == "":
		return usageErrorf("the task is empty")
	case len(f.docs) == 0:
		return usageErrorf("give at least one --doc (a file, a folder, or - for stdin)")
	case !orchestrate.ValidPlanner(f.planner):
		return usageErrorf("--planner must be auto, full, llm, outline or retrieval, not %q", f.planner)
	case f.window < 0:
		return usageErrorf("--window must be 0 (known windows) or a number of tokens")
	case f.concurrency < 1:
		return usageErrorf("--concurrency must be at least 1")
	case f.maxSubtasks < 1:
		return usageErrorf("--max-subtasks must be at least 1")
	case f.maxFallback < -1:
		return usageErrorf("--max-fallback-tokens must be 0 (one single call's worth), -1 (no ceiling) or a number of tokens")
	case f.engine != "local" && f.engine != "dbos":
		return usageErrorf("--engine must be local or dbos, not %q", f.engine)
	}
	if f.engine == "dbos" && !cmd.Flags().Changed("concurrency") {
		// The workers' --concurrency bounds what runs; a coordinator
		// that queued only four items at a time would idle them.
		f.concurrency = max(f.maxSubtasks, orchestrate.DefaultConcurrency)
	}
	mode, err := outputMode(f)
	if err != nil {
		return err
	}
	// Traces go out only when an OTLP endpoint is set; the flush at the
	// end is bounded so that a collector that is down cannot hold the exit.
	flush, tracer, err := telemetry.Setup(ctx, os.Getenv)
	if err != nil {
		return err
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := flush(fctx); err != nil {
			fmt.Fprintf(stderr, "baton: warning: %v\n", err)
		}
	}()
	docs, err := document.Load(f.docs, cmd.InOrStdin())
	if err != nil {
		return err
	}
	// A bad prices file fails here, before anything is paid for.
	prices, err := pricing.Load(f.prices)
	if err != nil {
		return err
	}
	lib := skill.Builtins()
	for _, dir := range f.skills {
		problems, err := lib.AddDir(dir)
		if err != nil {
			return fmt.Errorf("--skills %s: %w", dir, err)
		}
		for _, p := range problems {
			fmt.Fprintf(stderr, "baton: warning: %s\n", p)
		}
	}

	cfg := orchestrate.Config{
		Task:              task,
		Context:           docs.Text,
		Parts:             docs.Parts,
		Planner:           f.planner,
		Skills:            lib,
		DryRun:            f.dryRun,
		FailFast:          f.failFast,
		Concurrency:       f.concurrency,
		MaxSubtasks:       f.maxSubtasks,
		SubagentMax:       f.subagentMax,
		Stream:            f.stream,
		MaxFallbackTokens: f.maxFallback,
		Window:            f.window,
	}
	for _, s := range docs.Sources {
		cfg.Sources = append(cfg.Sources, s.Name)
	}

	out := cmd.OutOrStdout()
	var sj *streamJSON
	if mode == outputStreamJSON {
		sj = newStreamJSON(out, nil)
	}
	// On a terminal, retry notices go through the live progress block
	// (set below, before any call is made) instead of being drawn over.
	// In stream-json they are events, and the live block is not drawn.
	var prog *progress
	live := isTerminal(stderr) && sj == nil
	switch {
	case sj != nil:
		f.models.onRetry = sj.retry
	case live:
		f.models.onRetry = func(attempt int, wait time.Duration, err error) {
			if prog != nil {
				prog.retry(attempt, wait, err)
			}
		}
	}
	var answer *answerStream
	switch {
	case f.stream && sj != nil:
		cfg.OnText, cfg.OnRestart = sj.text, sj.restart
	case f.stream && mode == outputText && !f.dryRun:
		// The live block stops before the first piece of the answer:
		// it redraws by moving the cursor up, over whatever is below.
		answer = &answerStream{w: out, stderr: stderr, before: func() {
			if prog != nil {
				prog.close()
			}
		}}
		cfg.OnText, cfg.OnRestart = answer.text, answer.restart
		f.models.onRetry = answer.retryNotice(f.models.onRetry)
	}
	f.models.window = f.window
	var shared *sharedLimits
	if !f.dryRun && f.engine == "dbos" {
		u, err := databaseURL(f.databaseURL)
		if err != nil {
			return err
		}
		if shared, err = openSharedLimits(ctx, u, cmd.Flags(), &f.models); err != nil {
			return err
		}
		defer shared.Close()
	}
	if !f.dryRun {
		m, sel, err := f.models.resolve(ctx, f.concurrency, stderr)
		switch {
		case errors.Is(err, llm.ErrNoProvider) && f.models.provider == "":
			// Said once, here, with what to set; stdout then only says
			// that no model was called.
			fmt.Fprintf(stderr, "baton: %v; running as a dry run\n", err)
		case err != nil:
			if hint := providerHint(err, f.models.provider); hint != "" {
				fmt.Fprintf(stderr, "baton: %s\nbaton: %s\n", oneLineErr(err), hint)
				return &exitErr{code: exitError}
			}
			return err
		default:
			cfg.Provider, cfg.ModelName = sel.Provider, sel.Model
			cfg.PlannerModel = f.plannerModel
			cfg.Model, cfg.Redactor = telemetry.Model(m, tracer, sel.Provider, telemetry.CaptureContent(os.Getenv)), sel.Redactor
			if sel.Window > 0 {
				// The server runs every request with this window
				// (Ollama's num_ctx), so it is the one to check.
				if f.window > sel.Window {
					fmt.Fprintf(stderr, "baton: warning: --window %d is more than %s supports; using its %d tokens\n", f.window, sel.Model, sel.Window)
				}
				cfg.Window = sel.Window
			}
			if sj != nil {
				cfg.Model = usageModel{m: cfg.Model, s: sj}
			}
		}
	}
	if cfg.Model == nil && f.models.model != "" {
		// A dry run names no provider, but a --model given still decides
		// the counter and the window the estimate is checked against.
		cfg.ModelName, cfg.PlannerModel = f.models.model, f.plannerModel
	}
	cfg.Counter = tokens.ForModel(cfg.ModelName)

	switch {
	case sj != nil:
		cfg.Progress = sj.event
	case live && cfg.Model != nil:
		fd := int(stderr.(*os.File).Fd())
		prog = newLiveProgress(stderr, func() int { w, _, _ := term.GetSize(fd); return w })
		cfg.Progress = prog.event
	}
	if f.engine == "dbos" && cfg.Model != nil {
		d, err := openCoordinator(ctx, f.databaseURL, cfg.Model, shared.rate)
		if err != nil {
			return err
		}
		defer d.Close()
		warnIfNoWorker(ctx, stderr, d)
		cfg.Engine, cfg.Documents = d.eng, d.docs
	}
	cfg.Span = telemetry.Spans(tracer)
	actx, endAsk := telemetry.StartAsk(ctx, tracer, cfg.Provider, cfg.ModelName)
	rec, runErr := orchestrate.Ask(actx, cfg)
	endAsk(rec, runErr)
	if prog != nil {
		prog.close()
	}
	if rec == nil {
		return runErr
	}
	failed := runErr != nil && !errors.Is(runErr, orchestrate.ErrPartial) && !errors.Is(runErr, context.Canceled)
	if failed {
		// The cause comes first, before the summary's zeros, with what
		// to check when it is the user's setting.
		fmt.Fprintf(stderr, "baton: %s\n", oneLineErr(runErr))
		if hint := providerHint(runErr, rec.Provider); hint != "" {
			fmt.Fprintf(stderr, "baton: %s\n", hint)
		}
	}
	rec.PriceWith(prices)
	saved := ""
	if !f.noSave {
		// The default runs dir lies in .baton, which ignores itself for
		// git; a failure here is not worth failing a paid run for.
		_ = batondir.EnsureFor(f.runsDir)
		p, err := rec.Save(f.runsDir)
		if err != nil {
			fmt.Fprintf(stderr, "baton: %v\n", err)
		} else {
			saved = p
			indexAsk(stderr, rec, p)
		}
	}

	switch {
	case sj != nil:
		sj.finish(rec)
	case mode == outputJSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rec); err != nil {
			return err
		}
	case rec.DryRun && !errors.Is(runErr, context.Canceled):
		// A dry run stopped before its plan has nothing to show.
		printDryRun(out, rec)
	case answer != nil && answer.finish():
		// Printed as it arrived; not again.
		if rec.Answer == "" {
			fmt.Fprintln(stderr, "baton: the answer above is incomplete: the synthesis failed")
		}
	default:
		if rec.Answer != "" {
			fmt.Fprintln(out, strings.TrimRight(rec.Answer, "\n"))
		}
	}
	if !rec.DryRun {
		printSummary(stderr, rec)
	}
	if saved != "" {
		fmt.Fprintf(stderr, "baton: run record: %s\n", saved)
	}
	for _, w := range rec.Warnings {
		fmt.Fprintf(stderr, "baton: warning: %s\n", w)
	}
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, orchestrate.ErrPartial):
		fmt.Fprintf(stderr, "baton: partial answer: %v\n", runErr)
		return &exitErr{code: exitPartial}
	case errors.Is(runErr, context.Canceled):
		return withCode(exitError, errors.New("cancelled; the run record keeps what finished"))
	default:
		return &exitErr{code: exitError} // printed first, above
	}
}

// What ask writes on stdout (--output).
const (
	outputText       = "text"
	outputJSON       = "json"
	outputStreamJSON = "stream-json"
)

// outputMode reads --output and --json, which is --output json.
func outputMode(f askFlags) (string, error) {
	switch f.output {
	case "":
		if f.json {
			return outputJSON, nil
		}
		return outputText, nil
	case outputText, outputStreamJSON:
		if f.json {
			return "", usageErrorf("--json is --output json; it cannot be combined with --output %s", f.output)
		}
		return f.output, nil
	case outputJSON:
		return outputJSON, nil
	default:
		return "", usageErrorf("--output must be text, json or stream-json, not %q", f.output)
	}
}

func printDryRun(w io.Writer, rec *orchestrate.Record) {
	// Why no model was called, when no provider was found, went to
	// stderr already, once.
	fmt.Fprintln(w, "No model was called: this is a dry run.")
	if line := singleCallLine(rec); line != "" {
		fmt.Fprintln(w, line+".")
	}
	if rec.Planner == orchestrate.PlannerDirect {
		fmt.Fprintln(w, "No plan: a real run answers in one direct call with the whole context, since no plan would send less (--planner full or outline shows one).")
	} else {
		fmt.Fprintf(w, "Plan (%s planner, %s):\n", rec.Planner, plural(len(rec.Subtasks), "subtask"))
	}
	for _, s := range rec.Subtasks {
		fmt.Fprintf(w, "  %d. [%s] %s\n", s.Index+1, s.Skill, s.Task)
		if s.Slice == nil {
			continue
		}
		var where []string
		for _, m := range s.Slice.Matched {
			if m.Heading != "" {
				where = append(where, fmt.Sprintf("%q (lines %d-%d)", m.Heading, m.StartLine, m.EndLine))
			} else {
				where = append(where, fmt.Sprintf("lines %d-%d", m.StartLine, m.EndLine))
			}
		}
		switch {
		case s.Scope == "all":
			where = append(where, "whole context (scope all)")
		case s.Slice.Fallback:
			where = append(where, "whole context (no pointer matched)")
		}
		fmt.Fprintf(w, "     slice: %s — %d tokens", strings.Join(where, ", "), s.ContextTokens)
		if s.MapCalls > 0 {
			fmt.Fprintf(w, "; map-reduce over %s (%s; reduce requests not estimated)", plural(s.Parts, "part"), plural(s.MapCalls, "map request"))
		}
		fmt.Fprintln(w)
	}
	a := rec.Accounting
	fmt.Fprintf(w, "Estimate (%s, local count):\n", a.Counter)
	fmt.Fprintf(w, "  context:                 %d tokens\n", a.ContextTokens)
	switch rec.EstimatedPlanner {
	case orchestrate.PlannerDirect:
		fmt.Fprintf(w, "  planner input:           0 tokens (a real run would answer in one direct call with the whole context)\n")
	case orchestrate.PlannerLLM, orchestrate.PlannerOutline:
		name := "full"
		if rec.EstimatedPlanner == orchestrate.PlannerOutline {
			name = "outline"
		}
		fmt.Fprintf(w, "  planner input:           %d tokens (the %s planner a real run would use)\n", a.PlannerInputTokens, name)
	default:
		fmt.Fprintf(w, "  planner input:           %d tokens (a real run would plan without a model)\n", a.PlannerInputTokens)
	}
	fmt.Fprintf(w, "  sub-agent input:         %d tokens\n", a.SubagentInputTokens)
	if rec.Planner == orchestrate.PlannerDirect {
		fmt.Fprintf(w, "  orchestrated input:      %d tokens (the direct call)\n", a.OrchestratedInputTokens)
	} else {
		fmt.Fprintf(w, "  orchestrated input:      %d tokens (synthesis not included)\n", a.OrchestratedInputTokens)
	}
	fits := "fits"
	if a.SingleCallFits != nil && !*a.SingleCallFits {
		fits = "would not fit"
	}
	fmt.Fprintf(w, "  single call:             %d tokens (task and whole context in one request; %s the %d-token window)\n", a.SingleCallInputTokens, fits, a.SingleCallWindow)
	fmt.Fprintf(w, "  naive input:             %d tokens (whole context to every sub-agent)\n", a.NaiveInputTokens)
	fmt.Fprintf(w, "  naive saving:            %.1f%% against the naive input, a baseline no user would choose; the single call is the one to beat\n", 100*a.SavingsRatio)
}

func printSummary(w io.Writer, rec *orchestrate.Record) {
	self, deleg, failed := 0, 0, 0
	for _, s := range rec.Subtasks {
		if s.Mode == orchestrate.ModeSelf {
			self++
		} else {
			deleg++
		}
		if s.Status == orchestrate.StatusFailed {
			failed++
		}
	}
	u := rec.Usage.Total
	a := rec.Accounting
	cost := "cost unknown" // a warning below says why
	if rec.CostUSD != nil {
		cost = "cost " + pricing.FormatUSD(*rec.CostUSD) + " at list prices"
	}
	if line := singleCallLine(rec); line != "" && rec.Answer != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	what := fmt.Sprintf("%d subtasks (%d self-answered, %d delegated, %d failed)", len(rec.Subtasks), self, deleg, failed)
	if rec.Planner == orchestrate.PlannerDirect {
		what = "answered in one direct call with the whole context, no plan cheaper than that"
	}
	fmt.Fprintf(w, "baton: %s; provider usage: %d input, %d output, %d cache read, %d cache write tokens; %s\n",
		what, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, cost)
	if a.FallbacksRefused > 0 {
		fmt.Fprintf(w, "baton: %s not sent the whole context again: the fallbacks reached --max-fallback-tokens (%d)\n", plural(a.FallbacksRefused, "subtask"), a.FallbackCeiling)
	}
	if a.MapCalls > 0 {
		fmt.Fprintf(w, "baton: map-reduce: %s and %s\n", plural(a.MapCalls, "map request"), plural(a.ReduceCalls, "reduce request"))
	}
	if a.NaiveInputTokens > 0 {
		fmt.Fprintf(w, "baton: %s\n", naiveLine(a))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
