package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/runlock"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/telemetry"
	"github.com/baton-dev/baton/workflow"
)

func init() {
	register(newRunCmd)
	register(newResumeCmd)
}

type runFlags struct {
	workflow    string
	models      modelFlags
	dryRun      bool
	fresh       bool
	maxTurns    int
	concurrency int
	// agentCmd runs each step as a process of an external agent.
	agentCmd     string
	agentTimeout time.Duration
	maxSteps     int
	engine       string
	databaseURL  string
}

func (f *runFlags) register(cmd *cobra.Command, withDryRun bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.workflow, "workflow", "baton.yaml", "the workflow file; its folder is the workspace")
	f.models.register(fl)
	// A run's limits are its own process's, whatever the engine: its
	// steps never go to the workers' queue.
	fl.Lookup("rpm").Usage = "requests per minute limit for this process (0: none)"
	fl.Lookup("tpm").Usage = "tokens per minute limit for this process (0: none)"
	fl.IntVar(&f.maxTurns, "max-turns", runner.DefaultMaxTurns, "most tool rounds one step may take")
	fl.IntVar(&f.concurrency, "concurrency", runner.DefaultSubagentConcurrency, "sub-agents in flight at once")
	fl.StringVar(&f.agentCmd, "agent-cmd", "", "run each skill step as a fresh process of a command-line agent, `CMD` run with sh -c (input on stdin, handoff fields from a fenced handoff block in its output); no provider is needed")
	fl.DurationVar(&f.agentTimeout, "agent-timeout", runner.DefaultAgentTimeout, "longest one --agent-cmd process may run")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "most skill steps the run may take, counted across resumes (default: the workflow's max_steps, else "+fmt.Sprint(workflow.DefaultMaxSteps)+")")
	fl.StringVar(&f.engine, "engine", "local", "where each skill step is recorded: local (its journal in the workspace) or dbos (a durable item on PostgreSQL whose model and tool calls are its recorded steps)")
	fl.StringVar(&f.databaseURL, "database-url", "", "PostgreSQL URL of the dbos engine (default $BATON_DATABASE_URL)")
	if withDryRun {
		fl.BoolVar(&f.dryRun, "dry-run", false, "print the steps and each fresh context's size against the budget; call no model")
		fl.BoolVar(&f.fresh, "fresh", false, "start a new run even if an unfinished one exists")
	}
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [--workflow FILE] [flags]",
		Short: "Run a multi-phase skill workflow, each step in a fresh context, under a context budget",
		Long: `run executes the workflow in baton.yaml (or --workflow FILE). Every skill step
starts in a fresh context holding only its SKILL.md, the capsule, state.yaml
and the files it declares in <files_to_read>; decisions travel through
state.yaml. The context budget is evaluated at every phase boundary and
between tool rounds; a complete ledger entry is written before any reset.

If the workspace has an unfinished run, run resumes it (as baton resume
does) unless --fresh is given. The run log is .baton/runs/<id>/events.jsonl;
check it with baton ledger lint --run <id>.

With --agent-cmd 'CMD …' each skill step runs instead as a fresh process of
any command-line agent, started with sh -c in the workspace: its stdin holds
the step's SKILL.md body, a line "` + runner.AgentInputSeparator + `", the
step's input, and how to end the step; its stdout is read back, and the
handoff fields (next_skill, open_decisions, required_reading, context,
decisions, summary) come from a fenced ` + "```handoff" + ` YAML block in it,
or from the agent's own edits of state.yaml, as skill suites written for
such agents tell them to make (the block wins where both set a field).
No provider is needed; the agent's token usage is unknown to baton and
counted as zero. Without --agent-cmd, the workflow's agent_cmd key (if any)
is the command.

A run takes at most max_steps skill steps (baton.yaml, default ` + fmt.Sprint(workflow.DefaultMaxSteps) + `, or
--max-steps), counted across resumes: a skill that keeps naming itself as
its next step stops there, and the run stays resumable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkflow(cmd, f, false) },
	}
	f.register(cmd, true)
	return cmd
}

func newResumeCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume [--workflow FILE] [flags]",
		Short: "Continue the workspace's unfinished run from state.yaml, its journals and the ledger",
		Long: `resume continues the workspace's unfinished run (.baton/current.json) from
state.yaml, its step journals and the ledger; no completed model call is
paid again. A step that failed, was interrupted or died continues its own
session under its own number: its recorded responses and tool results come
from its journal, and no tool call it recorded is run again.

Ctrl-C or SIGTERM during run or resume cancels the calls in flight, keeps
everything done so far, prints one line saying how to resume, and exits 130.

The agent command is --agent-cmd, else the workflow's agent_cmd; it is
never taken from .baton/current.json, which an agent may have written. If
the run started with a different command (or with one, and none is given
now), resume says what it would run and stops: pass --agent-cmd to choose.
resume prints the command it runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkflow(cmd, f, true) },
	}
	f.register(cmd, false)
	return cmd
}

func runWorkflow(cmd *cobra.Command, f runFlags, resume bool) error {
	ctx := cmd.Context()
	stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	wf, err := workflow.Load(f.workflow)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no workflow file %s (give one with --workflow)", f.workflow)
		}
		return err
	}
	for _, w := range wf.Warnings {
		fmt.Fprintf(stderr, "baton: warning: %s\n", w)
	}
	if f.dryRun {
		return printRunPlan(out, wf, f.models.model)
	}
	if err := checkRunLimits(cmd, f); err != nil {
		return err
	}
	open, err := engineOpener(cmd, f, wf)
	if err != nil {
		return err
	}
	resuming, err := chooseAgent(cmd, &f, wf, resume, stderr)
	if err != nil {
		return err
	}
	// Traces go out only when an OTLP endpoint is set.
	tracer, flush, err := startTelemetry(ctx, stderr)
	if err != nil {
		return err
	}
	defer flush()
	prog := stderrProgress(stderr)
	f.models.onRetry = prog.retry
	cfg := runner.Config{
		Workflow: wf, ModelName: f.models.model, ModelExplicit: cmd.Flags().Changed("model"), AgentCmd: f.agentCmd, AgentTimeout: f.agentTimeout,
		MaxTurns: f.maxTurns, MaxSteps: f.maxSteps, SubagentConcurrency: f.concurrency, Log: prefixWriter{stderr},
		Engine: open, EngineName: f.engine,
	}
	// While the run goes the progress display owns stderr: the runner's
	// lines are written above its live line.
	cfg.Log, cfg.Progress = prog.logWriter(), prog.event
	if f.agentCmd == "" { // an external agent brings its own model
		if err := runModel(ctx, &cfg, &f, tracer, stderr); err != nil {
			return err
		}
	}
	cfg.Trace = telemetry.Run(tracer, cfg.Provider, telemetry.CaptureContent(os.Getenv))
	var res *runner.Result
	prog.start()
	defer prog.close() // on a panic too: the live line is finalised
	switch {
	case resuming:
		res, err = runner.Resume(ctx, cfg)
	default:
		res, err = runner.Run(ctx, cfg)
	}
	prog.close()
	return runOutcome(cmd, f, wf, res, err)
}

// checkRunLimits refuses limits a run could not go on with.
func checkRunLimits(cmd *cobra.Command, f runFlags) error {
	if f.maxTurns < 1 || f.concurrency < 1 {
		return usageErrorf("--max-turns and --concurrency must be at least 1")
	}
	if f.agentTimeout <= 0 {
		return usageErrorf("--agent-timeout must be positive")
	}
	if cmd.Flags().Changed("max-steps") && f.maxSteps < 1 {
		return usageErrorf("--max-steps must be at least 1")
	}
	return nil
}

// engineOpener is the engine --engine names: nil for the in-process one.
func engineOpener(cmd *cobra.Command, f runFlags, wf *workflow.Workflow) (runner.EngineOpener, error) {
	switch f.engine {
	case "local":
		return nil, nil
	case "dbos":
		if f.agentCmd != "" || (!cmd.Flags().Changed("agent-cmd") && wf.AgentCmd != "") {
			return nil, usageErrorf("--engine dbos records a step's model and tool calls; a step run by an agent command makes none that baton sees")
		}
		url, err := databaseURL(f.databaseURL)
		if err != nil {
			return nil, err
		}
		return runEngine(url), nil
	default:
		return nil, usageErrorf("--engine must be local or dbos, not %q", f.engine)
	}
}

// chooseAgent decides whether the run resumes and which agent command runs
// its steps (into f.agentCmd), and says so on stderr.
func chooseAgent(cmd *cobra.Command, f *runFlags, wf *workflow.Workflow, resume bool, stderr io.Writer) (resuming bool, err error) {
	var info runner.RunInfo
	unfinished := false
	if resume || !f.fresh {
		if info, unfinished, err = runner.UnfinishedRun(wf); err != nil {
			return false, err
		}
	}
	resuming = resume || (unfinished && !f.fresh)
	// A workspace another process is running is refused before anything
	// is said about resuming it; the runner's own lock is what guards it.
	if err := runlock.Check(wf.Dir); err != nil {
		return false, err
	}
	if cmd.Flags().Changed("agent-cmd") {
		if resuming && unfinished {
			fmt.Fprintf(stderr, "baton: resuming run %s with %s\n", info.ID, describeAgent(f.agentCmd))
		}
		return resuming, nil
	}
	// The command comes from the workflow file, never from current.json:
	// anything under .baton/ may have been written by an agent, and a
	// resume must not run what an agent chose.
	f.agentCmd = wf.AgentCmd
	if resuming && unfinished {
		if info.AgentCmd != f.agentCmd {
			return false, fmt.Errorf("run %s started with %s; without --agent-cmd it would resume with %s, since %s; pass --agent-cmd explicitly to choose the command",
				info.ID, describeAgent(info.AgentCmd), describeAgent(f.agentCmd), agentSource(wf))
		}
		fmt.Fprintf(stderr, "baton: resuming run %s with %s\n", info.ID, describeAgent(f.agentCmd))
	} else if f.agentCmd != "" {
		fmt.Fprintf(stderr, "baton: running each step with agent command %q (agent_cmd in %s)\n", f.agentCmd, filepath.Base(wf.Path))
	}
	return resuming, nil
}

// runModel puts the model the flags choose into cfg, traced, with the
// window its server reports.
func runModel(ctx context.Context, cfg *runner.Config, f *runFlags, tracer trace.Tracer, stderr io.Writer) error {
	wf := cfg.Workflow
	// Ollama is asked to run every request with the workflow's declared
	// window (capped by what the model supports).
	f.models.window = wf.WindowTokens
	model, sel, err := f.models.resolve(ctx, f.concurrency+1, stderr)
	if err != nil {
		return err
	}
	cfg.Model, cfg.ModelName, cfg.Provider = telemetry.Model(model, tracer, sel.Provider, telemetry.CaptureContent(os.Getenv)), sel.Model, sel.Provider
	if sel.Window > 0 {
		cfg.ServerWindow = sel.Window
		if wf.WindowTokens > sel.Window {
			fmt.Fprintf(stderr, "baton: warning: window_tokens %d is more than %s supports; every request is checked against its %d tokens\n", wf.WindowTokens, sel.Model, sel.Window)
		}
	}
	return nil
}

// runOutcome indexes a run that began, and says how it ended: its summary,
// or how to go on.
func runOutcome(cmd *cobra.Command, f runFlags, wf *workflow.Workflow, res *runner.Result, err error) error {
	stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	started := res != nil && res.RunID != ""
	if started {
		// Interrupted, failed or done: every run that began is in the history.
		indexRun(stderr, batondir.At(wf.Dir).Run(res.RunID))
	}
	if started && err != nil && cmd.Context().Err() != nil {
		// Ctrl-C or SIGTERM: one line, and the exit code says the rest.
		fmt.Fprintf(stderr, "baton: interrupted: %s; resume with: baton resume --workflow %s%s\n", stoppedAt(res, err), f.workflow, f.engineFlag())
		return withCode(exitInterrupted, nil)
	}
	if started {
		fmt.Fprintf(stderr, "baton: run %s: %d steps, %d resets, %d calls answered from journals; usage %d input, %d output tokens%s\n",
			res.RunID, res.Steps, res.Resets, res.Replayed, res.Usage.InputTokens, res.Usage.OutputTokens,
			runCost(batondir.At(wf.Dir).Run(res.RunID)))
	}
	if err != nil {
		if errors.Is(err, runner.ErrMaxSteps) || !started {
			return err // it says how to go on
		}
		return resumeAdvice(err, f)
	}
	fmt.Fprintln(out, res.Summary)
	return nil
}

// stoppedAt says where an interrupted run stopped.
func stoppedAt(res *runner.Result, err error) string {
	var se *runner.StepError
	if errors.As(err, &se) {
		return fmt.Sprintf("run %s stopped in step %d (%s) with everything it did saved", res.RunID, se.Step, se.Skill)
	}
	return fmt.Sprintf("run %s stopped with everything it did saved", res.RunID)
}

// resumeAdvice adds to a failed run's error the way on: baton resume only
// where a resume can get further, and otherwise what to change first.
func resumeAdvice(err error, f runFlags) error {
	var se *runner.StepError
	if !errors.As(err, &se) {
		return err
	}
	switch {
	case se.Kind == runner.FailMaxTurns:
		return fmt.Errorf("%w (resume with: baton resume --workflow %s%s --max-turns %d)", err, f.workflow, f.engineFlag(), 2*se.MaxTurns)
	case se.Resumable():
		return fmt.Errorf("%w (resume with: baton resume --workflow %s%s)", err, f.workflow, f.engineFlag())
	case se.Kind == runner.FailRefusedAgain:
		return fmt.Errorf("%w; %s", err, se.Advice())
	case se.Advice() != "":
		return fmt.Errorf("%w (the provider refused the request, and baton resume would send it again: %s)", err, se.Advice())
	}
	return err
}

// engineFlag is what a resume command must add to continue on the same
// engine (the database URL stays the user's to give, or in the
// environment).
func (f runFlags) engineFlag() string {
	if f.engine == "dbos" {
		return " --engine dbos"
	}
	return ""
}

// describeAgent names an agent command for a message.
func describeAgent(cmd string) string {
	if cmd == "" {
		return "no agent command (steps on the provider)"
	}
	return fmt.Sprintf("agent command %q", cmd)
}

func agentSource(wf *workflow.Workflow) string {
	if wf.AgentCmd == "" {
		return filepath.Base(wf.Path) + " has no agent_cmd"
	}
	return "that is the agent_cmd in " + filepath.Base(wf.Path)
}

func printRunPlan(w io.Writer, wf *workflow.Workflow, model string) error {
	p, err := runner.DryRun(wf, model)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "No model was called: this is a dry run of %s (%s).\n", wf.Name, filepath.ToSlash(wf.Path))
	fmt.Fprintf(w, "Checked as a run checks them: %s, %s and the skills.\n", wf.State, wf.Ledger)
	note := ""
	if !p.WindowKnown {
		note = " (assumed: set window_tokens or --model)"
	}
	fmt.Fprintf(w, "Budget: window %d tokens%s, reset at %d tokens (threshold_fraction %.2f)\n", p.Window, note, p.Threshold, wf.ThresholdFraction)
	for i, s := range p.Steps {
		fmt.Fprintf(w, "%d. phase %s, skill %s: fresh context %d tokens (%.1f%% of the reset threshold)\n",
			i+1, s.Phase, s.Skill, s.Context.Tokens, 100*float64(s.Context.Tokens)/float64(max(p.Threshold, 1)))
		parts := 0
		for _, fi := range s.Context.Files {
			parts += fi.Tokens
		}
		fmt.Fprintf(w, "     %-8s %-40s %6d tokens\n", "skill", s.Skill+"/SKILL.md (system prompt)", s.Context.Tokens-parts)
		for _, fi := range s.Context.Files {
			name := fi.Path
			if name == "" {
				name = "(" + fi.Role + ")"
			}
			status := ""
			if fi.Missing {
				status = " — not included: " + fi.Problem
			}
			fmt.Fprintf(w, "     %-8s %-40s %6d tokens%s\n", fi.Role, name, fi.Tokens, status)
		}
	}
	return nil
}

// prefixWriter prefixes each line the runner logs with "baton: ".
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, "baton: "+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// runCost is the summary line's cost clause: every paid call of the run so
// far (a resume's included), priced from the run log as the run history
// prices it, so the two never disagree. An external agent's steps report
// no usage and a model without a price has none: then the clause says so.
func runCost(runDir string) string {
	row, err := history.FromRunDir(runDir)
	switch {
	case err != nil:
		return ""
	case row.CostUSD == nil:
		return "; cost unknown (a model has no price)"
	case row.InputTokens == 0 && row.OutputTokens == 0:
		return ""
	}
	return fmt.Sprintf("; cost %s for the whole run at list prices", pricing.FormatUSD(*row.CostUSD))
}
