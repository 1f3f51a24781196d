package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/hostgov"
	"github.com/baton-dev/baton/internal/runid"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
)

func init() { register(newLedgerCmd) }

func newLedgerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Check the context-budget ledger and run log",
		Long: `A run keeps a ledger (a markdown file of entries written before every reset)
and a run log (.baton/runs/<run id>/events.jsonl, one JSON event per line).
baton ledger lint reads them and reports the red flags of the context-budget
discipline.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown ledger command %q (want lint)", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newLedgerLintCmd())
	return cmd
}

type ledgerLintOpts struct {
	run, session, log, ledger, workspace string
	skills                               []string
}

func newLedgerLintCmd() *cobra.Command {
	var o ledgerLintOpts
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Report context-budget red flags in a run, its ledger and skills",
		Long: `lint reports, one line each:

  no-boundary-evaluation    a run reached its last phase with a phase boundary
                            that has no reset evaluation recorded
  hard-limit-reset          a reset or compaction made only at the hard limit
                            (reason hard_limit, or at 95% of the window or more)
  resume-not-from-ledger    a session resumed from anything but a ledger entry
  incomplete-ledger-entry   a ledger entry lacking a field, a next step or evidence
  oversize-return-ingested  a sub-agent return over its contract taken in whole
  copied-threshold-table    a skill body restating the threshold table or fraction
                            instead of referring to the budget settings
  copied-ledger-format      a skill body restating the ledger entry format
  reset-without-ledger      a reset with no complete ledger entry written before it

--run ID reads <workspace>/.baton/runs/ID/events.jsonl and only that run's
events; --session ID reads the log baton's hooks keep of a Claude Code or Codex
session, <workspace>/.baton/sessions/ID/events.jsonl, where a compaction with
no complete ledger entry before it is a reset-without-ledger; --log names a run log directly. The ledger is --ledger, or else the
ledger_path of the run's run_start event (relative to the workspace). --skills
takes a SKILL.md or a folder searched for SKILL.md files, and may be repeated.

Exit status: 0 and a "clean" line when nothing is found, 1 when a red flag is
found or a file cannot be read, 2 for a wrong command line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLedgerLint(cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.run, "run", "", "run id: read <workspace>/.baton/runs/ID/events.jsonl and only that run's events")
	f.StringVar(&o.session, "session", "", "host session id: read <workspace>/.baton/sessions/ID/events.jsonl")
	f.StringVar(&o.log, "log", "", "run log file (JSON Lines)")
	f.StringVar(&o.ledger, "ledger", "", "ledger file (default: the run_start event's ledger_path)")
	f.StringArrayVar(&o.skills, "skills", nil, "SKILL.md or folder of skills to check (repeatable)")
	f.StringVar(&o.workspace, "workspace", ".", "workspace the run's paths are relative to")
	return cmd
}

func runLedgerLint(stdout, stderr io.Writer, o ledgerLintOpts) error {
	if o.run == "" && o.session == "" && o.log == "" && o.ledger == "" && len(o.skills) == 0 {
		return usageErrorf("ledger lint: nothing to check; give --run, --session, --log, --ledger or --skills")
	}
	logPath, err := lintLogPath(o)
	if err != nil {
		return err
	}
	var events []runlog.Event
	if logPath != "" {
		if events, err = lintEvents(stderr, logPath, o.run); err != nil {
			return err
		}
	}
	entries, err := lintLedger(o, events)
	if err != nil {
		return err
	}
	skills, err := loadSkillBodies(o.skills)
	if err != nil {
		return err
	}

	findings := ledger.Lint(events, entries, skills)
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(stderr, "baton: %s\n", countOf(len(findings), "red flag", "red flags"))
		return withCode(exitError, nil)
	}
	fmt.Fprintf(stdout, "clean: no red flags in %s, %s and %s\n",
		countOf(len(events), "event", "events"), countOf(len(entries), "ledger entry", "ledger entries"), countOf(len(skills), "skill file", "skill files"))
	return nil
}

// lintLogPath is the log to check: --log, or the log of the run or the
// session named, whose id is checked before it becomes a path.
func lintLogPath(o ledgerLintOpts) (string, error) {
	if o.session != "" {
		if o.run != "" || o.log != "" {
			return "", usageErrorf("ledger lint: give one of --run, --session and --log")
		}
		if hostgov.SessionID(o.session) != o.session {
			return "", usageErrorf("ledger lint: --session %q is not a session id baton keeps (letters, digits, - and _)", o.session)
		}
		return batondir.At(o.workspace).SessionLog(o.session), nil
	}
	if o.run != "" {
		if err := runid.Check(o.run); err != nil {
			return "", usageErrorf("ledger lint: --run %q is not a baton run id (letters, digits, - and _)", o.run)
		}
	}
	if o.log == "" && o.run != "" {
		return batondir.At(o.workspace).RunLog(o.run), nil
	}
	return o.log, nil
}

// lintEvents reads the log at path, keeping run's events when run is given.
// A torn last line is a warning; any other unreadable line is an error.
func lintEvents(stderr io.Writer, path, run string) ([]runlog.Event, error) {
	evs, problems, err := runlog.Read(path)
	if err != nil {
		return nil, unwrapPathKeep(err, path)
	}
	var bad []string
	for _, p := range problems {
		if p.Torn {
			// A run killed mid-write leaves this; it is not a fault of
			// the log, but the reader should know a line is lost.
			fmt.Fprintf(stderr, "baton: warning: %s\n", p)
			continue
		}
		bad = append(bad, p.String())
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("malformed run log: %s", firstAndCount(bad))
	}
	var events []runlog.Event
	for _, e := range evs {
		if run == "" || e.Run == run {
			events = append(events, e)
		}
	}
	if run != "" && len(events) == 0 {
		return nil, fmt.Errorf("run log %s has no events of run %q", path, run)
	}
	return events, nil
}

// lintLedger reads --ledger, or the ledger the run's run_start names. Nil
// when there is none to read.
func lintLedger(o ledgerLintOpts, events []runlog.Event) ([]ledger.Entry, error) {
	ledgerPath, explicit := o.ledger, o.ledger != ""
	if !explicit {
		for _, e := range events {
			if e.Type == runlog.RunStart && e.LedgerPath != "" {
				ledgerPath = e.LedgerPath
				if !filepath.IsAbs(ledgerPath) {
					ledgerPath = filepath.Join(o.workspace, ledgerPath)
				}
				break
			}
		}
	}
	if ledgerPath == "" {
		return nil, nil
	}
	es, problems, err := ledger.Read(ledgerPath)
	switch {
	case err != nil && !explicit && errors.Is(err, fs.ErrNotExist):
		// The run named a ledger it never wrote; the reset rules will say
		// so if a reset needed it.
		return nil, nil
	case err != nil:
		return nil, unwrapPathKeep(err, ledgerPath)
	case len(problems) > 0:
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.String()
		}
		return nil, fmt.Errorf("malformed ledger: %s", firstAndCount(msgs))
	}
	// Non-nil even when empty: a ledger was read, so it, not the run log's
	// ledger_written events, says what was written.
	return append([]ledger.Entry{}, es...), nil
}

// unwrapPathKeep turns "ledger: open x: no such file" into one line naming
// the file once.
func unwrapPathKeep(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	return err
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func firstAndCount(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	return fmt.Sprintf("%s (and %d more)", msgs[0], len(msgs)-1)
}

// loadSkillBodies reads each SKILL.md named, or found under a folder named.
func loadSkillBodies(paths []string) ([]ledger.SkillBody, error) {
	var out []ledger.SkillBody
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--skills %s: %w", p, unwrapPath(err))
		}
		var files []string
		if st.IsDir() {
			err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && d.Name() == "SKILL.md" {
					files = append(files, path)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("--skills %s: %w", p, unwrapPath(err))
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("--skills %s: no SKILL.md found", p)
			}
			sort.Strings(files)
		} else {
			files = []string{p}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("--skills %s: %w", f, unwrapPath(err))
			}
			out = append(out, ledger.SkillBody{Path: f, Body: string(b)})
		}
	}
	return out, nil
}
