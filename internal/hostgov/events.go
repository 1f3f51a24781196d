package hostgov

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/tokens"
)

// Reasons of the reset events a host's compaction is logged as: the
// host's own trigger.
const (
	ReasonManual = "manual"
	ReasonAuto   = "auto"
)

// Notes on ledger_written events, saying who wrote the entry.
const (
	NoteByAgent   = "written by the agent"
	NoteComposed  = "composed by baton from the transcript"
	NoteBlocked   = "manual compaction blocked: no ledger entry written by the agent"
	pendingLedger = "pending-ledger.md"
)

// latestEntry reads the ledger: its newest complete entry, nil when it has
// none or does not exist.
func (s *session) latestEntry(path string) (*ledger.Entry, error) {
	entries, _, err := ledger.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ledger.LatestOf(entries), nil
}

// preCompact makes sure a complete ledger entry is on disk before the
// host compacts: the agent's own since the last reset, or one baton
// composes from the transcript. Only --strict blocks, and only a manual
// compaction: an automatic one happens because the window is full.
func (s *session) preCompact() (Result, error) {
	m := s.measure(true)
	var err error
	trigger := s.p.Trigger
	if trigger != ReasonAuto {
		trigger = ReasonManual
	}
	reset := runlog.Event{Type: runlog.Reset, Reason: trigger, Mode: "compact",
		ContextTokens: m.context, WindowTokens: m.window, ContextFraction: m.fraction()}
	path, cerr := confine(s.project, s.o.Ledger)
	var latest *ledger.Entry
	if cerr != nil {
		cerr = fmt.Errorf("ledger %w", cerr)
	} else if latest, err = s.latestEntry(path); err != nil {
		s.note("baton: %v", err)
	}
	var st sessionState
	if err := s.withState(func(x *sessionState) { st = *x; x.LastReset, x.Crossed, x.Misses = s.now(), false, 0 }); err != nil {
		s.note("baton: session state: %v", err)
	}
	since := st.LastReset
	if m.t != nil && m.t.LastCompact.After(since) {
		since = m.t.LastCompact
	}
	if since.IsZero() && m.t != nil {
		since = m.t.Started
	}
	if since.IsZero() {
		since = st.Started
	}
	if latest != nil && !since.IsZero() && !latest.Time.Before(since.Truncate(time.Second)) && latest.Time.After(st.Covered) {
		s.cover(latest.Time)
		reset.LedgerTime = latest.Time
		s.log(runlog.Event{Type: runlog.LedgerWritten, LedgerPath: s.o.Ledger, LedgerTime: latest.Time,
			Complete: runlog.Bool(true), Note: NoteByAgent}, reset)
		return s.result(nil), nil
	}
	if s.o.Strict && trigger == ReasonManual {
		s.log(runlog.Event{Type: runlog.MissNote, Note: NoteBlocked})
		reason := fmt.Sprintf("baton: no ledger entry since the last compaction. Call ledger_append (the baton MCP tool) to write a complete entry to %s, then run /compact again.", s.o.Ledger)
		out, _ := json.Marshal(map[string]string{"decision": "block", "reason": reason})
		return s.result(out), nil
	}
	at := s.now()
	if latest != nil && !at.Truncate(time.Second).After(latest.Time) {
		at = latest.Time.Add(time.Second) // newest by its heading, as Latest orders
	}
	e := s.compose(m.t, at, trigger)
	// The entry is kept beside the session's log before the ledger's lock
	// is taken: a baton run holding it past the hook's time limit, or a
	// ledger that cannot be written, loses nothing.
	keep := filepath.Join(s.dir, pendingLedger)
	kept := s.ensureDir() == nil && atomicfile.Write(keep, ledger.Render(e), 0o644) == nil
	err = cerr
	if err == nil {
		err = ledger.Append(path, e)
	}
	if err != nil {
		if kept {
			s.note("baton: the entry baton composed is kept in %s", s.relPath(keep))
		}
		s.log(runlog.Event{Type: runlog.LedgerWritten, LedgerPath: s.o.Ledger, LedgerTime: e.Time,
			Complete: runlog.Bool(false), Note: NoteComposed + ": not written: " + err.Error()}, reset)
		return s.result(nil), err
	}
	if kept {
		_ = os.Remove(keep)
	}
	s.cover(e.Time)
	reset.LedgerTime = e.Time
	s.log(runlog.Event{Type: runlog.LedgerWritten, LedgerPath: s.o.Ledger, LedgerTime: e.Time,
		Complete: runlog.Bool(true), Note: NoteComposed}, reset)
	s.note("baton: wrote a ledger entry to %s before the %s compaction", s.o.Ledger, trigger)
	return s.result(nil), nil
}

// cover records the entry that covered this compaction, so that the next
// one asks for an entry newer than it.
func (s *session) cover(at time.Time) {
	if err := s.withState(func(x *sessionState) { x.Covered = at }); err != nil {
		s.note("baton: session state: %v", err)
	}
}

// postCompact (Codex) records the end of a compaction.
func (s *session) postCompact() (Result, error) {
	if err := s.withState(func(x *sessionState) { x.LastReset, x.Crossed, x.Misses = s.now(), false, 0 }); err != nil {
		s.note("baton: session state: %v", err)
	}
	return s.result(nil), nil
}

// sessionStart hands a resumed, compacted or cleared session the newest
// complete ledger entry and the handoff, so it resumes from the ledger.
func (s *session) sessionStart() (Result, error) {
	switch s.p.Source {
	case "compact", "resume", "clear":
	default:
		return s.result(nil), nil
	}
	if s.p.Source != "resume" {
		if err := s.withState(func(x *sessionState) { x.LastReset, x.Crossed, x.Misses = s.now(), false, 0 }); err != nil {
			s.note("baton: session state: %v", err)
		}
	}
	path, err := confineRead(s.project, s.o.Ledger)
	if err != nil {
		return s.result(nil), fmt.Errorf("ledger %w", err)
	}
	latest, err := s.latestEntry(path)
	if err != nil {
		s.log(runlog.Event{Type: runlog.Resume, From: runlog.FromTranscript, Note: s.p.Source + ": " + err.Error()})
		return s.result(nil), err
	}
	if latest == nil && s.p.Source == "resume" {
		// A session resumed with nothing reset since it began carries its
		// own conversation; there is no entry to give it yet.
		return s.result(nil), nil
	}
	if latest == nil {
		s.log(runlog.Event{Type: runlog.Resume, From: runlog.FromTranscript, Note: s.p.Source + ": no complete ledger entry"})
		msg := fmt.Sprintf("baton: %s has no complete ledger entry, so this session resumes from the host's summary only. Write one with ledger_append before the next compaction.", s.o.Ledger)
		return s.result(additional(EventSessionStart, msg)), nil
	}
	s.log(runlog.Event{Type: runlog.Resume, From: runlog.FromLedger, LedgerTime: latest.Time, Note: s.p.Source})
	return s.result(additional(EventSessionStart, s.resumeContext(latest, s.o.ResumeTokens))), nil
}

// threshold tells the agent, once a turn, that the context is past the
// threshold; a turn after the first still past it is a miss.
func (s *session) threshold(event string) (Result, error) {
	r, err := s.thresholdLine(event)
	return s.withPending(event, r), err
}

func (s *session) thresholdLine(event string) (Result, error) {
	m := s.measure(false)
	if m.context == 0 || m.context < m.threshold {
		return s.result(nil), nil
	}
	turn := cmpOr(s.p.PromptID, cmpOr(s.p.TurnID, s.p.Prompt))
	var first, told bool
	var misses int
	err := s.withState(func(x *sessionState) {
		if turn != "" && x.Announced == turn {
			told = true
			return
		}
		x.Announced = turn
		if !x.Crossed {
			x.Crossed, first = true, true
		} else {
			x.Misses++
		}
		misses = x.Misses
	})
	if err != nil {
		s.note("baton: session state: %v", err)
	}
	if told {
		return s.result(nil), nil
	}
	if first {
		s.log(runlog.Event{Type: runlog.ThresholdCrossed, ProjectedTokens: m.context, ThresholdTokens: m.threshold, WindowTokens: m.window})
	} else {
		s.log(runlog.Event{Type: runlog.MissNote, Misses: misses, ProjectedTokens: m.context, ThresholdTokens: m.threshold, WindowTokens: m.window,
			Note: fmt.Sprintf("context still past the threshold %d turns after it was announced, with no compaction", misses)})
	}
	line := fmt.Sprintf("baton: the context is %d tokens, %.0f%% of the %d-token window, past the threshold of %.0f%% (%d tokens): write a ledger entry (`ledger_append`) and compact at the next safe point.",
		m.context, 100*m.fraction(), m.window, 100*s.o.Threshold, m.threshold)
	return s.result(additional(event, line)), nil
}

// postToolUse announces the threshold and, after a sub-agent, a return
// over its contract.
func (s *session) postToolUse() (Result, error) {
	if s.p.ToolName == "Task" || s.p.ToolName == "Agent" {
		if r, over := s.taskReturn(); over {
			return r, nil
		}
	}
	return s.threshold(EventPostToolUse)
}

// taskReturn checks a sub-agent tool's result against the contract.
func (s *session) taskReturn() (Result, bool) {
	text := responseText(s.p.ToolResponse)
	n := tokens.Count(text)
	if n <= s.o.ContractTokens {
		return Result{}, false
	}
	name := "task-" + SessionID(cmpOr(s.p.ToolUseID, fmt.Sprint(s.now().UnixNano()))) + ".md"
	where := s.spill(name, text)
	line := s.oversizeLine("the sub-agent", n, where)
	// SubagentStop queued the same news; it is given here.
	if err := s.withState(func(x *sessionState) { x.Pending = nil }); err != nil {
		s.note("baton: session state: %v", err)
	}
	return s.result(additional(EventPostToolUse, line)), true
}

func (s *session) oversizeLine(who string, n int, where string) string {
	line := fmt.Sprintf("baton: %s returned %d tokens, over its contract of %d. Do not work from the whole return: ask the sub-agent for a condensed summary of at most %d tokens.", who, n, s.o.ContractTokens, s.o.ContractTokens)
	if where != "" {
		line += " The full return is kept in " + where + "."
	}
	return line
}

// withPending adds the lines queued for the agent to an answer of event,
// and empties the queue.
func (s *session) withPending(event string, r Result) Result {
	if _, err := os.Stat(filepath.Join(s.dir, "state.json")); err != nil {
		return r // nothing was ever queued
	}
	var pending []string
	if err := s.withState(func(x *sessionState) { pending, x.Pending = x.Pending, nil }); err != nil || len(pending) == 0 {
		return r
	}
	text := strings.Join(pending, "\n")
	if len(r.Output) > 0 {
		var out struct {
			H struct {
				Context string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal(r.Output, &out) == nil && out.H.Context != "" {
			text = out.H.Context + "\n" + text
		}
	}
	r.Output = additional(event, text)
	return r
}

// subagentStop records a sub-agent's return over its contract and keeps
// the whole of it.
func (s *session) subagentStop() (Result, error) {
	text := s.p.LastAssistantMessage
	n := tokens.Count(text)
	if n <= s.o.ContractTokens {
		return s.result(nil), nil
	}
	where := s.spill("subagent-"+SessionID(cmpOr(s.p.AgentID, fmt.Sprint(s.now().UnixNano())))+".md", text)
	s.log(runlog.Event{Type: runlog.SubagentReturn, Tokens: n, ContractTokens: s.o.ContractTokens,
		Action: runlog.ActionReRequested, SpillPath: where, Note: cmpOr(s.p.AgentType, "sub-agent") + " " + s.p.AgentID})
	line := s.oversizeLine("the sub-agent "+s.p.AgentID, n, where)
	if err := s.withState(func(x *sessionState) { x.Pending = append(x.Pending, line) }); err != nil {
		s.note("baton: session state: %v", err)
	}
	return s.result(nil), nil
}

// spill writes text to the session's folder and returns its project path
// ("" when it could not be written, which a note says).
func (s *session) spill(name, text string) string {
	if err := s.ensureDir(); err != nil {
		s.note("baton: cannot keep the sub-agent's return: %v", err)
		return ""
	}
	p := filepath.Join(s.dir, batondir.SpillName, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
		err = atomicfile.Write(p, []byte(text), 0o644)
		if err == nil {
			return s.relPath(p)
		}
		s.note("baton: cannot keep the sub-agent's return: %v", err)
	}
	return ""
}

// responseText is the text of a tool response: a string, text blocks, or
// an object's content or result.
func responseText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if text, blocks := contentOf(raw); text != "" || blocks != nil {
		return text
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
		Result  string          `json:"result"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if text, _ := contentOf(obj.Content); text != "" {
			return text
		}
		return obj.Result
	}
	return string(raw)
}
