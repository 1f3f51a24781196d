package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
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

// askLong is ask's help.
const askLong = `ask answers TASK over the documents given with --doc.

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
error, 130 interrupted.`

func newAskCmd() *cobra.Command {
	var f askFlags
	cmd := &cobra.Command{
		Use:   "ask [flags] TASK",
		Short: "Answer a task over documents: plan once, slice per subtask, run sub-agents in parallel, synthesise",
		Long:  askLong,
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
	f.register(cmd.Flags())
	return cmd
}

// register defines ask's flags.
func (f *askFlags) register(fl *pflag.FlagSet) {
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
}

func runAsk(cmd *cobra.Command, f askFlags, task string) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	if err := checkAskFlags(f, task); err != nil {
		return err
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
	out := askOutput{mode: mode, out: cmd.OutOrStdout(), stderr: stderr}
	opts := []baton.Option{baton.WithEvents(out.events(&f))}
	if !f.dryRun && f.engine == "dbos" {
		u, err := databaseURL(f.databaseURL)
		if err != nil {
			return err
		}
		shared, err := openSharedLimits(ctx, u, cmd.Flags(), &f.models)
		if err != nil {
			return err
		}
		defer shared.Close()
		opts = append(opts, baton.WithEngine(func(ctx context.Context, m llm.Model) (engine.Engine, orchestrate.Documents, func(), error) {
			d, err := openCoordinator(ctx, f.databaseURL, m, shared.rate)
			if err != nil {
				return nil, nil, nil, err
			}
			warnIfNoWorker(ctx, stderr, d)
			return d.eng, d.docs, func() { d.Close() }, nil
		}))
	}
	// The run history's messages (a recovery, a failed index) are the
	// command's own.
	opts = append(opts, baton.WithRecorder(nil, func(rec *orchestrate.Record, p string) error {
		indexAsk(stderr, rec, p)
		return nil
	}))
	res, runErr := baton.Ask(ctx, askRequest(f, task, cmd.InOrStdin(), stderr), opts...)
	if out.prog != nil {
		out.prog.close()
	}
	if res == nil {
		if hint := providerHint(runErr, f.models.provider); hint != "" {
			fmt.Fprintf(stderr, "baton: %s\nbaton: %s\n", oneLineErr(runErr), hint)
			return &exitErr{code: exitError}
		}
		return runErr
	}
	return out.finish(res, runErr)
}

// checkAskFlags refuses flags that cannot be run, with exit code 2.
func checkAskFlags(f askFlags, task string) error {
	switch {
	case strings.TrimSpace(task) == "":
		return usageErrorf("the task is empty")
	case len(f.docs) == 0:
		return usageErrorf("give at least one --doc (a file, a folder, or - for stdin)")
	case f.concurrency < 1:
		return usageErrorf("--concurrency must be at least 1")
	case f.maxSubtasks < 1:
		return usageErrorf("--max-subtasks must be at least 1")
	case f.engine != "local" && f.engine != "dbos":
		return usageErrorf("--engine must be local or dbos, not %q", f.engine)
	}
	if !f.dryRun {
		if err := f.models.check(); err != nil {
			return err
		}
	}
	var re *baton.RequestError
	if err := askRequest(f, task, nil, nil).Validate(); errors.As(err, &re) {
		// The library names the request's fields; the command its flags.
		return usageErrorf("--%s %s", strings.ReplaceAll(re.Field, "_", "-"), re.Rule)
	}
	return nil
}

// askRequest maps the flags onto the library's request.
func askRequest(f askFlags, task string, stdin io.Reader, stderr io.Writer) baton.AskRequest {
	f.models.window = f.window
	mo := f.models.options()
	return baton.AskRequest{
		Task: task, Documents: f.docs, Stdin: stdin,
		Planner: f.planner, PlannerModel: f.plannerModel,
		Provider: mo.Provider, Model: mo.Model, BaseURL: mo.BaseURL, Window: f.window,
		Concurrency: f.concurrency, MaxSubtasks: f.maxSubtasks,
		MaxFallbackTokens: f.maxFallback, SubagentMaxTokens: f.subagentMax,
		DryRun: f.dryRun, DryRunWithoutProvider: true, FailFast: f.failFast, Stream: f.stream,
		SkillDirs: f.skills, Prices: f.prices, BuiltinPrices: f.prices == "", RunsDir: f.runsDir, NoSave: f.noSave,
		Calls:       f.models.policy(f.concurrency, stderr),
		CallTimeout: mo.CallTimeout, IdleTimeout: mo.IdleTimeout,
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
