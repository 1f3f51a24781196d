package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/baton-dev/baton/runlog"
)

// Run writes the report of the workflow run whose folder is dir
// (.baton/runs/<id>), read from its run log.
func Run(w io.Writer, dir string, opts Options) error {
	events, _, err := runlog.Read(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if len(events) == 0 {
		return fmt.Errorf("report: run log in %s has no events", dir)
	}
	p := Page{Title: "baton run " + events[0].Run, Subtitle: "started " + events[0].Time.UTC().Format("2006-01-02 15:04:05 UTC")}
	p.Sections = append(p.Sections, runSections(dir, events)...)
	return WritePage(w, p)
}

// runSections are the phases and steps, the context chart, the resets, the
// sub-agent returns, the tool calls and the cost per step.
var runSections = func(dir string, events []runlog.Event) []Section { return nil }
