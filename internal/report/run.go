package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/runlog"
)

// Run writes the report of the workflow run whose folder is dir
// (.baton/runs/<id>), read from its run log. A log cut short (a run killed
// mid-write) is drawn as far as it goes, with a note; only a log with no
// event at all is an error.
func Run(w io.Writer, dir string, opts Options) error {
	events, problems, err := runlog.Read(filepath.Join(dir, batondir.RunLogName))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if len(events) == 0 {
		return fmt.Errorf("report: run log in %s has no events", dir)
	}
	p := Page{Title: "baton run " + events[0].Run, Subtitle: "started " + events[0].Time.UTC().Format("2006-01-02 15:04:05 UTC")}
	p.Sections = append(p.Sections, runSections(dir, events, problems)...)
	return WritePage(w, p)
}

// runSections are the summary with the continuous-session baseline, the
// phases and steps with their cost, the context chart, the resets with
// their ledger entries, the sub-agent returns and the tool calls.
func runSections(dir string, events []runlog.Event, problems []runlog.Problem) []Section {
	v := buildRunView(events)
	return []Section{
		runSummary(v, problems),
		runStepsSection(v),
		runContextSection(v),
		runResetsSection(v, dir),
		runSubagentsSection(v),
		runToolsSection(v),
	}
}
