package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

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
}

func (f *runFlags) register(cmd *cobra.Command, withDryRun bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.workflow, "workflow", "baton.yaml", "the workflow file; its folder is the workspace")
	f.models.register(fl)
	fl.IntVar(&f.maxTurns, "max-turns", runner.DefaultMaxTurns, "most tool rounds one step may take")
	fl.IntVar(&f.concurrency, "concurrency", runner.DefaultSubagentConcurrency, "sub-agents in flight at once")
	fl.StringVar(&f.agentCmd, "agent-cmd", "", "run each skill step as a fresh process of a command-line agent, `CMD` run with sh -c (input on stdin, handoff fields from a fenced handoff block in its output); no provider is needed")
	fl.DurationVar(&f.agentTimeout, "agent-timeout", runner.DefaultAgentTimeout, "longest one --agent-cmd process may run")
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
decisions, summary) come from a fenced ` + "```handoff" + ` YAML block in it.
No provider is needed; the agent's token usage is unknown to baton and
counted as zero.`,
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
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runWorkflow(cmd, f, true) },
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
	if f.maxTurns < 1 || f.concurrency < 1 {
		return usageErrorf("--max-turns and --concurrency must be at least 1")
	}
	if f.agentTimeout <= 0 {
		return usageErrorf("--agent-timeout must be positive")
	}
	_, unfinished := runner.Unfinished(wf)
	resuming := resume || (unfinished && !f.fresh)
	if resuming && f.agentCmd == "" {
		if c := runner.UnfinishedAgentCmd(wf); c != "" {
			f.agentCmd = c
			fmt.Fprintf(stderr, "baton: resuming with the agent command the run started with: %s\n", c)
		}
	}
	cfg := runner.Config{
		Workflow: wf, ModelName: f.models.model, AgentCmd: f.agentCmd, AgentTimeout: f.agentTimeout,
		MaxTurns: f.maxTurns, SubagentConcurrency: f.concurrency, Log: prefixWriter{stderr},
	}
	if f.agentCmd == "" { // an external agent brings its own model
		model, sel, err := f.models.resolve(ctx, f.concurrency+1, stderr)
		if err != nil {
			return err
		}
		cfg.Model, cfg.ModelName, cfg.Provider = model, sel.Model, sel.Provider
	}
	var res *runner.Result
	switch {
	case resuming:
		res, err = runner.Resume(ctx, cfg)
	default:
		res, err = runner.Run(ctx, cfg)
	}
	if res != nil && res.RunID != "" {
		fmt.Fprintf(stderr, "baton: run %s: %d steps, %d resets, %d calls answered from journals; usage %d input, %d output tokens\n",
			res.RunID, res.Steps, res.Resets, res.Replayed, res.Usage.InputTokens, res.Usage.OutputTokens)
	}
	if err != nil {
		if res != nil && res.RunID != "" {
			return fmt.Errorf("%w (resume with: baton resume --workflow %s)", err, f.workflow)
		}
		return err
	}
	fmt.Fprintln(out, res.Summary)
	return nil
}

func printRunPlan(w io.Writer, wf *workflow.Workflow, model string) error {
	p, err := runner.DryRun(wf, model)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "No model was called: this is a dry run of %s (%s).\n", wf.Name, filepath.ToSlash(wf.Path))
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
