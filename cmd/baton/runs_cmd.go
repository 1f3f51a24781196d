package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
)

func init() { register(newRunsCmd) }

func newRunsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, search and show every ask and run, from the run history",
		Long: `Every baton ask and baton run is indexed in one run history per user: a
SQLite database, history.db, in $` + history.EnvHome + ` when it is set, else in the
user's data folder ($XDG_DATA_HOME/baton or ~/.local/share/baton; on macOS
~/Library/Application Support/baton; on Windows %LocalAppData%\baton).
The record files stay where the runs wrote them (.baton/runs/); the index
only points at them. history.dirs beside the database lists the folders of
records it has seen, so a missing or damaged database is rebuilt from them
(a damaged file is kept aside, never deleted).

Runs made before the history existed are added with baton runs import DIR.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown runs command %q (want list, show, import or report)", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newRunsListCmd(), newRunsShowCmd(), newRunsImportCmd(), newRunsReportCmd())
	return cmd
}

// knownStatuses are the values --status accepts: an ask record's and a
// workflow run's.
var knownStatuses = []string{orchestrate.RunOK, orchestrate.RunPartial, orchestrate.RunFailed, orchestrate.RunDryRun,
	history.StatusInterrupted, history.StatusUnfinished}

type runsListFlags struct {
	kind     string
	statuses []string
	since    string
	search   string
	limit    int
	json     bool
}

func newRunsListCmd() *cobra.Command {
	var f runsListFlags
	cmd := &cobra.Command{
		Use:   "list [--kind ask|run|session] [--status S,…] [--since WHEN] [--search TEXT] [--json]",
		Short: "List runs, newest first",
		Long: `list prints the runs of the history, newest first: id, kind, status, the
task (ask) or workflow (run), model, input and output tokens, the input
tokens saved against the two baselines (every sub-agent given the whole
context; one call with the whole context) and, for a workflow run, against
one continuous session that drops nothing (a modelled baseline: the same
calls, each carrying all the context the run's fresh sessions and resets
had dropped before it), cost in dollars, duration and the folder the run
was made in. A "-" is a figure the run has not got (an ask has no
continuous-session baseline, a workflow run not the other two; a model
without a price has no cost).

--search keeps the runs whose task, workflow name, answer or skills hold
every word given. --since takes a duration back from now (90m, 36h, 7d,
2w), a date (2026-03-01) or a time (RFC 3339). --json prints a JSON array,
one object per run, without the answers (baton runs show ID has them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runsList(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "kind", "", "only runs of this kind: ask, run or session (a Claude Code or Codex session baton's hooks governed)")
	fl.StringSliceVar(&f.statuses, "status", nil, "only runs with one of these statuses: "+strings.Join(knownStatuses, ", "))
	fl.StringVar(&f.since, "since", "", "only runs started since WHEN: a duration back (7d, 36h), a date or an RFC 3339 time")
	fl.StringVar(&f.search, "search", "", "only runs whose task, workflow, answer or skills hold every word of TEXT")
	fl.IntVar(&f.limit, "limit", 0, "at most this many runs (0: all)")
	fl.BoolVar(&f.json, "json", false, "print a JSON array")
	return cmd
}

func runsList(cmd *cobra.Command, f runsListFlags) error {
	filter := history.Filter{Kind: f.kind, Statuses: f.statuses, Search: f.search, Limit: f.limit}
	switch f.kind {
	case "", history.KindAsk, history.KindRun, history.KindSession:
	default:
		return usageErrorf("--kind must be ask, run or session, not %q", f.kind)
	}
	for _, s := range f.statuses {
		if !contains(knownStatuses, s) {
			return usageErrorf("--status %q is not a status (want %s)", s, strings.Join(knownStatuses, ", "))
		}
	}
	if f.limit < 0 {
		return usageErrorf("--limit must be 0 (all) or more")
	}
	if f.since != "" {
		t, err := parseSince(f.since, time.Now())
		if err != nil {
			return usageErrorf("--since %q: %v", f.since, err)
		}
		filter.Since = t
	}
	return withHistory(cmd.ErrOrStderr(), func(d *history.DB) error {
		runs, err := d.List(filter)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if f.json {
			for i := range runs {
				runs[i].Answer = "" // bounded output; runs show has it
			}
			return writeJSON(out, runs)
		}
		if len(runs) == 0 {
			fmt.Fprintf(out, "No runs found in %s.\n", filepath.Join(d.Home(), history.DBName))
			return nil
		}
		printRuns(out, runs)
		return nil
	})
}

func printRuns(w io.Writer, runs []history.Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tTASK OR WORKFLOW\tMODEL\tIN\tOUT\tSAVED VS NAIVE\tVS ONE CALL\tVS ONE SESSION (MODELLED)\tCOST\tDURATION\tDIR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, r.Status, textclip.Width(oneLine(r.Title), 40), orDash(r.Model),
			r.InputTokens, r.OutputTokens, percent(r.NaiveSavings), percent(r.SingleCallSavings), percent(r.ContinuousSessionSavings),
			dollars(r.CostUSD), duration(r.DurationMS), r.Dir)
	}
	tw.Flush()
}

func newRunsShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show one run of the history (an id, the start of one, or last)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.ErrOrStderr(), func(d *history.DB) error {
				r, err := findRun(d, args[0])
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, r)
				}
				printRun(out, r)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as a JSON object")
	return cmd
}

func printRun(w io.Writer, r history.Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	title := "task"
	switch r.Kind {
	case history.KindRun:
		title = "workflow"
	case history.KindSession:
		title = "session"
	}
	rows := [][2]string{
		{"id", r.ID}, {"kind", r.Kind}, {"status", r.Status}, {title, oneLine(r.Title)},
		{"started", r.StartedAt.Local().Format(time.RFC3339)}, {"duration", duration(r.DurationMS)},
		{"model", orDash(strings.TrimSpace(r.Provider + " " + r.Model))},
		{"tokens", fmt.Sprintf("%d input, %d output, %d cache read, %d cache write", r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens)},
		{"saved", savedLine(r)},
		{"cost", dollars(r.CostUSD)},
		{"dir", r.Dir}, {"record", r.Record},
	}
	if len(r.Skills) > 0 {
		rows = append(rows, [2]string{"skills", strings.Join(r.Skills, ", ")})
	}
	if r.Error != "" {
		rows = append(rows, [2]string{"error", oneLine(r.Error)})
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	tw.Flush()
	if r.Answer != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(r.Answer, "\n"))
	}
}

func newRunsImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import DIR...",
		Short: "Add the runs recorded under DIR (every .baton/runs below it) to the history",
		Long: `import indexes the runs recorded under each DIR: every .baton/runs folder
below it (ask records and workflow run logs), and DIR itself when it is a
folder of ask records (one given to baton ask --runs-dir). A run already in
the history is updated from its record. Files that are not records are
reported and skipped.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			return withHistory(stderr, func(d *history.DB) error {
				for _, dir := range args {
					n, problems, err := d.Import(dir)
					for _, p := range problems {
						fmt.Fprintf(stderr, "baton: warning: skipped %s\n", p)
					}
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "Imported %s from %s.\n", plural(n, "run"), dir)
				}
				return nil
			})
		},
	}
}

// withHistory runs fn on the user's run history, saying on stderr what it
// took to open it (a rebuild, a damaged file kept aside). A database found
// damaged only by fn (a corrupt page past the first) is moved aside and
// rebuilt, and fn runs once more.
func withHistory(stderr io.Writer, fn func(*history.DB) error) error {
	d, err := history.Open("")
	if err != nil {
		return err
	}
	noteRecovery(stderr, d.Recovered)
	err = fn(d)
	d.Close()
	if !errors.Is(err, history.ErrDamaged) {
		return err
	}
	d, rerr := history.Repair("")
	if rerr != nil {
		return fmt.Errorf("%w; and it could not be rebuilt: %v", err, rerr)
	}
	defer d.Close()
	noteRecovery(stderr, d.Recovered)
	return fn(d)
}

func noteRecovery(stderr io.Writer, rec history.Recovery) {
	unread := ""
	if n := len(rec.Problems); n > 0 {
		unread = fmt.Sprintf("; %d record files could not be read", n)
	}
	switch {
	case rec.Damaged != "":
		fmt.Fprintf(stderr, "baton: warning: the run history was damaged; it is kept as %s and was rebuilt from the record files (%d runs%s)\n", rec.Damaged, rec.Runs, unread)
	case rec.Rebuilt:
		fmt.Fprintf(stderr, "baton: the run history was missing; rebuilt it from the record files (%d runs%s)\n", rec.Runs, unread)
	}
}

// indexAsk adds a saved ask record to the run history. The run is done
// and saved: a history that cannot take it costs one warning, never the
// run.
func indexAsk(stderr io.Writer, rec *orchestrate.Record, path string) {
	indexWith(stderr, path, filepath.Dir(path), func(d *history.DB) error { return d.IndexRecord(rec, path) })
}

func indexWith(stderr io.Writer, where, folder string, index func(*history.DB) error) {
	if err := withHistory(stderr, index); err != nil {
		warnNotIndexed(stderr, where, folder, err)
	}
}

// warnNotIndexed says that a run saved in where is not in the run history.
func warnNotIndexed(stderr io.Writer, where, folder string, err error) {
	fmt.Fprintf(stderr, "baton: warning: the run is saved in %s but not in the run history: %s (baton runs import %s adds it later)\n", where, oneLine(err.Error()), folder)
}

// parseSince reads --since: a duration back from now (with d and w for
// days and weeks), a date, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				if v*float64(u.unit) >= math.MaxInt64 {
					return time.Time{}, errors.New("too far back")
				}
				return now.Add(-time.Duration(v * float64(u.unit))), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("want a duration back (90m, 36h, 7d, 2w), a date (2006-01-02) or an RFC 3339 time")
}

// savedLine says what the run saved against its baselines: an ask's two,
// a workflow run's modelled continuous session.
func savedLine(r history.Run) string {
	if r.Kind == history.KindSession {
		return "- (a host's session: its model calls were the host's, not baton's)"
	}
	if r.Kind == history.KindRun {
		if r.ContinuousSessionSavings == nil {
			return "- (no paid model call with a known context to model a baseline from)"
		}
		return fmt.Sprintf("%s of the input against one continuous session that drops nothing (modelled: %d input tokens)",
			percent(r.ContinuousSessionSavings), r.ContinuousSessionInputTokens)
	}
	return fmt.Sprintf("%s of the input against every sub-agent given the whole context, %s against one call with it", percent(r.NaiveSavings), percent(r.SingleCallSavings))
}

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func dollars(v *float64) string {
	if v == nil {
		return "-"
	}
	return pricing.FormatUSD(*v)
}

func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// findRun is the run ID names: an id, the start of one, or "last" for the
// newest run in the history, so a command can follow the one just made
// without copying its id.
func findRun(d *history.DB, id string) (history.Run, error) {
	if id != "last" {
		return d.Find(id)
	}
	runs, err := d.List(history.Filter{Limit: 1})
	if err != nil {
		return history.Run{}, err
	}
	if len(runs) == 0 {
		return history.Run{}, fmt.Errorf("no run in the history yet: %w", history.ErrNotFound)
	}
	return runs[0], nil
}
