package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/internal/hostgov"
)

func init() {
	register(newHooksCmd)
	register(newHookCmd)
	register(newStatuslineCmd)
}

// maxHookInput bounds what a hook reads from the host: a tool's response
// rides in PostToolUse's JSON and may be large, but not without limit.
const maxHookInput = 32 << 20

type hooksOpts struct {
	host, scope, project, command, ledger string
	threshold                             float64
	window                                int
	strict                                bool
}

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install baton's hooks into Claude Code or Codex, remove them, or say what is installed",
		Long: `hooks governs sessions of Claude Code and Codex through their lifecycle hooks:
a complete ledger entry before every compaction, the newest entry given to a
session when it resumes, the threshold announced when the context passes it,
and sub-agent returns over their contract kept out of the context.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newHooksInstallCmd(), newHooksUninstallCmd(), newHooksStatusCmd())
	return cmd
}

func (o *hooksOpts) install() (hostgov.Install, error) {
	switch o.host {
	case hostgov.HostClaudeCode, hostgov.HostCodex:
	default:
		return hostgov.Install{}, usageErrorf("--host must be %s or %s, not %q", hostgov.HostClaudeCode, hostgov.HostCodex, o.host)
	}
	if o.scope != hostgov.ScopeProject && o.scope != hostgov.ScopeUser {
		return hostgov.Install{}, usageErrorf("--scope must be project or user, not %q", o.scope)
	}
	if o.threshold != 0 && (o.threshold <= 0 || o.threshold >= 1) {
		return hostgov.Install{}, usageErrorf("--threshold must be a fraction between 0 and 1, not %v", o.threshold)
	}
	if o.window < 0 {
		return hostgov.Install{}, usageErrorf("--window must be a number of tokens, not %d", o.window)
	}
	home, err := os.UserHomeDir()
	if err != nil && o.scope == hostgov.ScopeUser {
		return hostgov.Install{}, fmt.Errorf("hooks: the user's home folder: %w", err)
	}
	project, err := absDir(o.project)
	if err != nil {
		return hostgov.Install{}, err
	}
	return hostgov.Install{Host: o.host, Scope: o.scope, Project: project, Home: home, Command: o.command,
		Threshold: o.threshold, Window: o.window, Ledger: o.ledger, Strict: o.strict}, nil
}

func absDir(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a folder", dir)
	}
	return filepath.Abs(dir)
}

func newHooksInstallCmd() *cobra.Command {
	o := hooksOpts{scope: hostgov.ScopeProject, project: "."}
	cmd := &cobra.Command{
		Use:   "install --host claude-code|codex [--scope project|user] [--threshold 0.65] [--window N]",
		Short: "Merge baton's hook entries into the host's settings, beside the user's own",
		Long: `install adds baton's entries to .claude/settings.json (Claude Code) or
.codex/hooks.json (Codex), of the project or, with --scope user, of the home
folder. The user's hooks, keys and their order stay; the file's original bytes
are kept under .baton/ (or baton's data folder for --scope user) so that
uninstall gives them back exactly. Settings that are not valid JSON are refused
and left as they are.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := o.install()
			if err != nil {
				return err
			}
			path, err := hostgov.Apply(in)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed baton's %s hooks in %s\n", in.Host, path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "", "host agent: claude-code or codex")
	f.StringVar(&o.scope, "scope", o.scope, "project (the project's settings) or user (the home folder's)")
	f.StringVar(&o.project, "project", o.project, "project folder")
	f.Float64Var(&o.threshold, "threshold", hostgov.DefaultThreshold, "fraction of the window past which the agent is told to write a ledger entry and compact")
	f.IntVar(&o.window, "window", 0, "context window in tokens (default: the model's, from baton's table)")
	f.StringVar(&o.ledger, "ledger", "", "ledger path relative to the project (default: the ledger: of its baton.yaml, else specs/ledger.md)")
	f.BoolVar(&o.strict, "strict", false, "block a manual compaction the agent wrote no ledger entry for, instead of composing one")
	f.StringVar(&o.command, "command", "", "how the hooks call baton (default: baton, found on PATH)")
	return cmd
}

func newHooksUninstallCmd() *cobra.Command {
	o := hooksOpts{scope: hostgov.ScopeProject, project: "."}
	cmd := &cobra.Command{
		Use:   "uninstall [--host claude-code|codex] [--scope project|user]",
		Short: "Remove baton's hook entries, restoring the settings byte for byte when unchanged since install",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hosts := []string{o.host}
			if o.host == "" {
				hosts = []string{hostgov.HostClaudeCode, hostgov.HostCodex}
			}
			for _, h := range hosts {
				o.host = h
				in, err := o.install()
				if err != nil {
					return err
				}
				path, restored, err := hostgov.Remove(in)
				if err != nil {
					return err
				}
				switch {
				case restored:
					fmt.Fprintf(cmd.OutOrStdout(), "restored %s as it was before install\n", path)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "removed baton's %s hooks from %s (if any)\n", h, path)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "", "host agent: claude-code or codex (default both)")
	f.StringVar(&o.scope, "scope", o.scope, "project or user")
	f.StringVar(&o.project, "project", o.project, "project folder")
	return cmd
}

func newHooksStatusCmd() *cobra.Command {
	project := "."
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say which hooks baton has installed where, and whether the baton they call is on PATH",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := absDir(project)
			if err != nil {
				return err
			}
			home, _ := os.UserHomeDir()
			w := cmd.OutOrStdout()
			for _, st := range hostgov.Status(dir, home) {
				switch {
				case st.Err != nil:
					fmt.Fprintf(w, "%s %s: %s: %v\n", st.Host, st.Scope, st.Settings, st.Err)
				case len(st.Events) == 0 && !st.StatusLine:
					fmt.Fprintf(w, "%s %s: not installed (%s)\n", st.Host, st.Scope, st.Settings)
				default:
					what := strings.Join(st.Events, ", ")
					if st.StatusLine {
						what += ", status line"
					}
					found := "on PATH"
					if !st.OnPath {
						found = "NOT on PATH: the hooks will fail until it is"
					}
					fmt.Fprintf(w, "%s %s: installed in %s: %s; calls %s (%s)\n", st.Host, st.Scope, st.Settings, what, st.Command, found)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", project, "project folder")
	return cmd
}

type hookFlags struct {
	o       hostgov.Options
	timeout time.Duration
}

func (h *hookFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&h.o.Host, "host", hostgov.HostClaudeCode, "host agent: claude-code or codex")
	f.Float64Var(&h.o.Threshold, "threshold", hostgov.DefaultThreshold, "fraction of the window past which the agent is told to compact")
	f.IntVar(&h.o.Window, "window", 0, "context window in tokens (default: the model's)")
	f.StringVar(&h.o.Ledger, "ledger", "", "ledger path relative to the project (default: the ledger: of its baton.yaml, else specs/ledger.md)")
	f.StringVar(&h.o.State, "state", "", "state file relative to the project (default: the state: of its baton.yaml, else specs/state.yaml)")
}

func newHookCmd() *cobra.Command {
	var h hookFlags
	cmd := &cobra.Command{
		Use:   "hook EVENT",
		Short: "Answer a host's lifecycle hook (the command baton's installed hooks run)",
		Long: `hook reads the host's JSON on stdin and answers on stdout, for the events
PreCompact, PostCompact, SessionStart, UserPromptSubmit, PostToolUse and
SubagentStop. A hook that cannot do its work says why on stderr and exits 0,
so the host goes on; it gives up within --timeout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runHook(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], h)
			return nil
		},
	}
	h.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&h.o.Strict, "strict", false, "block a manual compaction the agent wrote no ledger entry for")
	f.IntVar(&h.o.ContractTokens, "contract", hostgov.DefaultContractTokens, "token bound of a sub-agent's return")
	f.DurationVar(&h.timeout, "timeout", hostgov.DefaultTimeout, "give up and let the host go on after this long")
	return cmd
}

// runHook answers one event. Whatever goes wrong, the host goes on: the
// reason is one line on stderr and the exit status 0.
func runHook(stdin io.Reader, stdout, stderr io.Writer, event string, h hookFlags) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "baton hook %s: internal error (%v); the session goes on\n", event, r)
		}
	}()
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	if err != nil {
		fmt.Fprintf(stderr, "baton hook %s: reading stdin: %v\n", event, err)
		return
	}
	if len(data) > maxHookInput {
		fmt.Fprintf(stderr, "baton hook %s: the host's input is over %d MiB; baton did nothing\n", event, maxHookInput>>20)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	res, err := hostgov.Handle(ctx, event, data, os.Getenv("CLAUDE_PROJECT_DIR"), h.o)
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "baton hook %s: %v\n", event, oneLine(err.Error()))
	}
	if len(res.Output) > 0 {
		stdout.Write(append(res.Output, '\n'))
	}
}

func newStatuslineCmd() *cobra.Command {
	var h hookFlags
	cmd := &cobra.Command{
		Use:   "statusline",
		Short: "Print Claude Code's status line: the context against the threshold and the window, and the ledger's age",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxHookInput))
			if err != nil {
				return err
			}
			line, err := hostgov.StatusLine(data, os.Getenv("CLAUDE_PROJECT_DIR"), h.o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), line)
			return nil
		},
	}
	h.add(cmd)
	return cmd
}
