package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
)

// Options are what a report needs besides the record.
type Options struct {
	// Now labels when the report was made (the footer); zero leaves it out.
	Generated string
}

// Ask writes the report of one ask record.
func Ask(w io.Writer, rec *orchestrate.Record, opts Options) error {
	if rec == nil {
		return fmt.Errorf("report: no record")
	}
	p := Page{
		Title:    "baton ask " + rec.ID,
		Subtitle: askSubtitle(rec),
	}
	p.Sections = append(p.Sections, askSummary(rec))
	p.Sections = append(p.Sections, askSections(rec)...)
	return WritePage(w, p)
}

func askSubtitle(rec *orchestrate.Record) string {
	parts := []string{"status " + rec.Status}
	if !rec.StartedAt.IsZero() {
		parts = append(parts, "started "+rec.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if m := strings.TrimSpace(rec.Provider + " " + rec.Model); m != "" {
		parts = append(parts, m)
	}
	return strings.Join(parts, " · ")
}

// askSummary is the task, the answer and what the run stopped on.
func askSummary(rec *orchestrate.Record) Section {
	var b strings.Builder
	b.WriteString("<h3>Task</h3>" + Pre(rec.Task))
	if rec.Error != "" {
		b.WriteString(Warn("The run failed: " + rec.Error))
	}
	for _, w := range rec.Warnings {
		b.WriteString(Warn(w))
	}
	if rec.Answer != "" {
		b.WriteString("<h3>Answer</h3>" + Pre(rec.Answer))
	} else if rec.DryRun {
		b.WriteString("<p>A dry run: no model was called, so there is no answer and the token figures are estimates.</p>")
	}
	return Section{ID: "summary", Title: "Task and answer", Body: b.String()}
}

// askSections are the plan, the document map, the token chart and the
// timeline, each in a file of its own.
func askSections(rec *orchestrate.Record) []Section {
	return []Section{askPlan(rec), askMap(rec), askTokens(rec), askTimeline(rec)}
}
