package hostgov

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-dev/baton/tokens"
)

// statusInput is the part of Claude Code's status line JSON baton reads.
type statusInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Model          struct {
		ID string `json:"id"`
	} `json:"model"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
	ContextWindow *struct {
		UsedPercentage *float64 `json:"used_percentage"`
		Size           int      `json:"context_window_size"`
	} `json:"context_window"`
}

// StatusLine is the line `baton statusline` prints: the context against
// the threshold and the window, and the age of the ledger's newest entry.
// The host's own figures win; without them the transcript is measured.
func StatusLine(stdin []byte, project string, o Options) (string, error) {
	var in statusInput
	if err := json.Unmarshal(stdin, &in); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadPayload, shortJSONErr(err))
	}
	if project == "" {
		project = cmpOr(in.Workspace.ProjectDir, cmpOr(in.Workspace.CurrentDir, in.Cwd))
	}
	o = o.declared(project).withDefaults()
	window, _ := tokens.Window(in.Model.ID, o.Window)
	var used float64 = -1
	if cw := in.ContextWindow; cw != nil {
		if cw.Size > 0 && o.Window == 0 {
			window = cw.Size
		}
		if cw.UsedPercentage != nil {
			used = *cw.UsedPercentage / 100
		}
	}
	if used < 0 && in.TranscriptPath != "" {
		if t, err := ReadTranscript(in.TranscriptPath, quickRead); err == nil {
			if in.Model.ID == "" && t.Model != "" {
				window, _ = tokens.Window(t.Model, o.Window)
			}
			if window > 0 {
				used = float64(t.ContextTokens()) / float64(window)
			}
		}
	}
	line := "baton ctx ?"
	if used >= 0 {
		line = fmt.Sprintf("baton ctx %.0f%% of %s", 100*used, kTokens(window))
	}
	line += fmt.Sprintf(" · threshold %.0f%%", 100*o.Threshold)
	if used >= o.Threshold {
		line += " (past it: write a ledger entry, then /compact)"
	}
	line += " · " + ledgerAge(project, o)
	return line, nil
}

func ledgerAge(project string, o Options) string {
	if project == "" {
		return "ledger ?"
	}
	path, err := confineRead(project, o.Ledger)
	if err != nil {
		return "ledger ?"
	}
	s := &session{o: o, project: project}
	e, err := s.latestEntry(path)
	switch {
	case err != nil:
		return "ledger unreadable"
	case e == nil:
		return "no ledger entry"
	}
	return "ledger " + age(o.Now().Sub(e.Time)) + " old"
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func kTokens(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
