package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/runner"
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
	stderr := cmd.ErrOrStderr()
	var open runner.EngineOpener
	if !f.dryRun { // a dry run calls no model and records nothing
		if err := checkRunLimits(cmd, f); err != nil {
			return err
		}
		var err error
		if open, err = engineOpener(f); err != nil {
			return err
		}
	}
	// While the run goes the progress display owns stderr: every line is
	// written above its live line.
	prog := stderrProgress(stderr)
	defer prog.close() // on a panic too: the live line is finalised
	log := prog.logWriter()
	events := baton.RunEvents{
		Start:    func(baton.RunStart) { prog.start() },
		Progress: prog.event, Log: log, Retry: prog.retry,
		Notice:  func(msg string) { fmt.Fprintln(log, msg) },
		Warning: func(msg string) { fmt.Fprintf(log, "warning: %s\n", msg) },
	}
	index := func(dir string) error {
		prog.close() // the history's notes are plain lines
		return withHistory(stderr, func(d *history.DB) error { return d.IndexRunDir(dir) })
	}
	res, err := baton.Run(cmd.Context(), runRequest(cmd, f, resume, open), baton.WithRunEvents(events), baton.WithRunHistory(index))
	prog.close()
	if errors.Is(err, baton.ErrNoWorkflow) {
		return fmt.Errorf("no workflow file %s (give one with --workflow)", f.workflow)
	}
	var re *baton.RequestError
	if errors.As(err, &re) {
		// The library names the request's fields; the command its flags.
		return usageErrorf("--%s %s", strings.ReplaceAll(re.Field, "_", "-"), re.Rule)
	}
	if f.dryRun && err == nil {
		return printRunPlan(cmd.OutOrStdout(), res.Workflow, res.Plan)
	}
	return runOutcome(cmd, f, res, err)
}

// runRequest maps the flags onto the library's request.
func runRequest(cmd *cobra.Command, f runFlags, resume bool, open runner.EngineOpener) baton.RunRequest {
	mo := f.models.options()
	pol := f.models.policy(f.concurrency+1, cmd.ErrOrStderr())
	pol.OnRetry = nil // the progress display's (RunEvents.Retry)
	req := baton.RunRequest{
		Workflow: f.workflow, Resume: resume, Fresh: f.fresh, DryRun: f.dryRun,
		Provider: mo.Provider, Model: mo.Model, BaseURL: mo.BaseURL,
		AgentTimeout: f.agentTimeout, MaxTurns: f.maxTurns, Concurrency: f.concurrency, MaxSteps: f.maxSteps,
		Engine: open, EngineName: f.engine,
		Calls:       pol,
		CallTimeout: mo.CallTimeout, IdleTimeout: mo.IdleTimeout,
	}
	if cmd.Flags().Changed("agent-cmd") {
		req.AgentCmd = &f.agentCmd
	}
	return req
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
	return f.models.check()
}

// engineOpener is the engine --engine names: nil for the in-process one.
func engineOpener(f runFlags) (runner.EngineOpener, error) {
	switch f.engine {
	case "local":
		return nil, nil
	case "dbos":
		if f.agentCmd != "" {
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

// runOutcome indexes a run that began, and says how it ended: its summary,
// or how to go on.
func runOutcome(cmd *cobra.Command, f runFlags, res *baton.RunResult, err error) error {
	stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	started := res != nil && res.RunID != ""
	if started && res.IndexErr != nil {
		warnNotIndexed(stderr, res.Dir, filepath.Dir(res.Dir), res.IndexErr)
	}
	if started && err != nil && cmd.Context().Err() != nil {
		// Ctrl-C or SIGTERM: one line, and the exit code says the rest.
		fmt.Fprintf(stderr, "baton: interrupted: %s; resume with: baton resume --workflow %s%s\n", stoppedAt(res.Result, err), f.workflow, f.engineFlag())
		return withCode(exitInterrupted, nil)
	}
	if started {
		fmt.Fprintf(stderr, "baton: run %s: %d steps, %d resets, %d calls answered from journals; usage %d input, %d output tokens%s\n",
			res.RunID, res.Steps, res.Resets, res.Replayed, res.Usage.InputTokens, res.Usage.OutputTokens,
			runCost(res.Dir))
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

// printRunPlan prints a dry run's plan: the steps and their contexts.
func printRunPlan(w io.Writer, wf *workflow.Workflow, p *runner.Plan) error {
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
