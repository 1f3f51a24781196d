package hostgov

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/tokens"
)

// Bounds of a composed entry: a ledger entry is a summary, and the
// transcript stays where it is for the rest.
const (
	maxItemRunes = 240
	maxRequests  = 6
	maxFiles     = 40
	maxTodos     = 20
)

// plan is what state.yaml says of the work, when the project keeps one.
type plan struct {
	phase, next string
	handoff     state.Handoff
	found       bool
}

func (s *session) readPlan() plan {
	path, err := confineRead(s.project, s.o.State)
	if err != nil {
		return plan{}
	}
	f, err := state.Load(path)
	if err != nil {
		return plan{}
	}
	p := plan{found: true, handoff: f.Handoff()}
	for _, k := range []string{"current_phase", "phase"} {
		if v, ok := f.Get(k); ok {
			if str, ok := v.(string); ok && strings.TrimSpace(str) != "" {
				p.phase = strings.TrimSpace(str)
				break
			}
		}
	}
	for _, k := range [][]string{{"next_step"}, {"handoff", "next_step"}} {
		if v, ok := f.Get(k...); ok {
			if str, ok := v.(string); ok && strings.TrimSpace(str) != "" {
				p.next = strings.TrimSpace(str)
				break
			}
		}
	}
	if p.next == "" && p.handoff.NextSkill != "" {
		p.next = "Run the skill " + p.handoff.NextSkill
	}
	return p
}

// confineRead is a project path for reading: inside the project by its
// text (the package that opens it refuses a symlink out).
func confineRead(project, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: a path inside the project is required", rel)
	}
	return filepath.Join(project, filepath.Clean(rel)), nil
}

// compose builds a complete ledger entry from the transcript and
// state.yaml, with no model call: the user's requests, the files written,
// the todo list, the last assistant summary, the phase and next step.
func (s *session) compose(t *Transcript, at time.Time, trigger string) ledger.Entry {
	if t == nil {
		t = &Transcript{Path: s.p.TranscriptPath}
	}
	pl := s.readPlan()
	tr := s.relPath(t.Path)
	ev := func(line int) string {
		if tr == "" {
			return "the session transcript"
		}
		return fmt.Sprintf("%s:%d", tr, line)
	}
	e := ledger.Entry{Time: at.Truncate(time.Second)}
	e.Phase = "session " + shortID(s.p.SessionID) + " " + trigger + " compaction"
	reqs := t.Requests
	if len(reqs) > maxRequests {
		e.FrozenDecisions = append(e.FrozenDecisions, fmt.Sprintf("%d earlier requests are in the transcript", len(reqs)-maxRequests))
		reqs = reqs[len(reqs)-maxRequests:]
	}
	for _, r := range reqs {
		e.FrozenDecisions = append(e.FrozenDecisions, "The user asked: "+oneLine(r.Text))
	}
	files := t.Files
	if len(files) > maxFiles {
		files = files[len(files)-maxFiles:]
	}
	for _, f := range files {
		rel := s.relPath(f.Text)
		e.Artifacts = append(e.Artifacts, oneLine(rel))
		e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: "Wrote " + oneLine(rel), Evidence: ev(f.Line)})
	}
	var open []string
	for i, td := range t.Todos {
		if i >= maxTodos {
			open = append(open, fmt.Sprintf("%d more todos in the transcript", len(t.Todos)-maxTodos))
			break
		}
		switch td.Status {
		case "completed":
			e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: "Todo done: " + oneLine(td.Content), Evidence: ev(td.Line)})
		default:
			open = append(open, fmt.Sprintf("Todo %s: %s", cmpOr(td.Status, "pending"), oneLine(td.Content)))
		}
	}
	if t.LastSummary.Text != "" {
		e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: "Last summary: " + oneLine(t.LastSummary.Text), Evidence: ev(t.LastSummary.Line)})
	}
	e.OpenTickets = open
	if t.Truncated {
		e.OpenTickets = append(e.OpenTickets, "Only the end of a long transcript was read; earlier work is in "+cmpOr(tr, "the transcript"))
	}
	e.CurrentPhase = pl.phase
	if e.CurrentPhase == "" {
		e.CurrentPhase = "host session (no phase in " + s.o.State + ")"
	}
	e.NextStep = pl.next
	if e.NextStep == "" {
		e.NextStep = nextFromTodos(t.Todos)
	}
	if e.NextStep == "" && len(t.Requests) > 0 {
		e.NextStep = "Continue the user's last request: " + oneLine(t.Requests[len(t.Requests)-1].Text)
	}
	if e.NextStep == "" {
		e.NextStep = "Ask the user what to do next; the transcript had no request"
	}
	e.OpenTickets = append(e.OpenTickets, "Composed by baton from the transcript at a "+trigger+" compaction: the agent wrote no ledger entry first")
	return e
}

func nextFromTodos(todos []Todo) string {
	for _, st := range []string{"in_progress", "pending"} {
		for _, td := range todos {
			if td.Status == st {
				return oneLine(td.Content)
			}
		}
	}
	return ""
}

// relPath is p relative to the project when it lies inside it.
func (s *session) relPath(p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	if r, err := filepath.Rel(s.project, p); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return p
}

// oneLine makes text one bounded line that cannot be read as a markdown
// heading or a ledger field.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, "#")
	// The ledger splits a Done so far item at its evidence marker.
	s = strings.ReplaceAll(s, "— evidence:", "- evidence:")
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxItemRunes {
		s = string(r[:maxItemRunes]) + "…"
	}
	return s
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resumeContext is what a resumed session is given: the newest complete
// entry and state.yaml's handoff, bounded to budget tokens, with pointers
// to the files for the rest.
func (s *session) resumeContext(e *ledger.Entry, budget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "baton: this session resumes from its ledger, not from the conversation. The newest complete entry of %s (line %d) follows; the files it names hold the rest.\n\n", s.o.Ledger, e.Line)
	b.WriteString(string(ledger.Render(*e)))
	pl := s.readPlan()
	if pl.found {
		h := pl.handoff
		var hb strings.Builder
		if h.NextSkill != "" {
			fmt.Fprintf(&hb, "- next_skill: %s\n", oneLine(h.NextSkill))
		}
		if h.LastStepCompleted != "" {
			fmt.Fprintf(&hb, "- last_step_completed: %s\n", oneLine(h.LastStepCompleted))
		}
		for _, d := range h.OpenDecisions {
			fmt.Fprintf(&hb, "- open decision: %s\n", oneLine(d))
		}
		for _, r := range h.RequiredReading {
			fmt.Fprintf(&hb, "- required reading: %s\n", oneLine(r))
		}
		if h.Context != "" {
			fmt.Fprintf(&hb, "- context: %s\n", oneLine(h.Context))
		}
		if hb.Len() > 0 {
			fmt.Fprintf(&b, "\nHandoff from %s:\n%s", s.o.State, hb.String())
		}
	}
	return bound(b.String(), budget, fmt.Sprintf("%s:%d", s.o.Ledger, e.Line))
}

// bound cuts text at a line so that it counts at most budget tokens, and
// says where the rest is.
func bound(text string, budget int, where string) string {
	if tokens.Count(text) <= budget {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	tail := fmt.Sprintf("\n[cut to %d tokens by baton; read the whole entry at %s]\n", budget, where)
	room := budget - tokens.Count(tail)
	lo, hi := 0, len(lines)
	for lo < hi { // the most lines that fit
		mid := (lo + hi + 1) / 2
		if tokens.Count(strings.Join(lines[:mid], "")) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(lines[:lo], "") + tail
}
