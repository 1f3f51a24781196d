package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/report"
)

func newRunsReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report ID [--out FILE.html]",
		Short: "Write one run of the history as a self-contained HTML report",
		Long: `Writes one HTML file (inline CSS and SVG, nothing fetched from the network)
that shows what the run did: for an ask, the plan, a map of which part of
each document every sub-agent saw, the tokens of each phase against the
baselines, and a timeline of every call; for a workflow run, its steps,
the context of every turn against the threshold and the window, the
resets with their ledger entries, tool calls and cost per step.

ID is a run id, the start of one (baton runs list shows them), or last
for the newest run. The file is report-ID.html in the current folder
(any character of the id other than a letter, a digit, "-" or "_" written
as "_", so an imported record's id cannot name a file elsewhere) unless
--out names another.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHistory(cmd.ErrOrStderr(), func(d *history.DB) error {
				r, err := findRun(d, args[0])
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				switch r.Kind {
				case history.KindRun:
					err = report.Run(&buf, filepath.Dir(r.Record), report.Options{})
				default:
					rec, rerr := history.ReadRecord(r.Record)
					if rerr != nil {
						return fmt.Errorf("run %s: %w", r.ID, rerr)
					}
					err = report.Ask(&buf, rec, report.Options{})
				}
				if err != nil {
					return fmt.Errorf("run %s: %w", r.ID, err)
				}
				path := out
				if path == "" {
					path = reportName(r.ID)
				}
				if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("report: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", path)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the HTML file to write (default report-ID.html in the current folder)")
	return cmd
}

// maxReportID bounds the part of a report's default name taken from the
// run's id; baton's own ids are 33 characters.
const maxReportID = 80

// reportName is the default file of a report: report-ID.html in the
// current folder. The id comes from a record, which may have been imported
// from anywhere, so every character that could name another folder (a
// separator, a dot, a drive colon) or trouble a shell is written as "_".
func reportName(id string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, id)
	if len(safe) > maxReportID {
		safe = safe[:maxReportID]
	}
	if safe == "" {
		safe = "run"
	}
	return "report-" + safe + ".html"
}
