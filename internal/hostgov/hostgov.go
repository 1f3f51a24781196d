// Package hostgov governs sessions of the host agents baton does not run
// itself (Claude Code, Codex) through their lifecycle hooks, so that the
// context-budget discipline of `baton run` holds inside them: a complete
// ledger entry before every compaction (composed from the transcript, with
// no model call, when the agent wrote none), the newest entry handed to the
// session when it resumes, the threshold announced when the context passes
// it, and sub-agent returns over their contract kept out of the context.
//
// A host cannot be made to compact: baton governs by blocking, by adding
// context and by writing files. Every hook event is recorded in the
// session's run log (.baton/sessions/<id>/events.jsonl, the runlog format),
// which `baton ledger lint --session` reads and the run history indexes.
package hostgov

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/workflow"
)

// Hosts baton installs hooks into.
const (
	HostClaudeCode = "claude-code"
	HostCodex      = "codex"
)

// Hook events baton answers. The names are the hosts' own.
const (
	EventPreCompact       = "PreCompact"
	EventPostCompact      = "PostCompact"
	EventSessionStart     = "SessionStart"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPostToolUse      = "PostToolUse"
	EventSubagentStop     = "SubagentStop"
)

// Defaults of Options.
const (
	DefaultThreshold      = 0.65
	DefaultContractTokens = 2000
	// DefaultResumeTokens bounds what SessionStart adds to a resumed
	// session: the ledger entry and the handoff, the rest by pointer.
	DefaultResumeTokens = 2000
	// DefaultTimeout is how long a hook may work before it gives up and
	// lets the host go on; the hosts' own limits are longer.
	DefaultTimeout = 20 * time.Second
)

// ErrBadPayload is wrapped by the error for stdin that is not a hook's
// JSON.
var ErrBadPayload = errors.New("hook input is not a host's hook JSON")

// Options are the settings of a hook, from its command line.
type Options struct {
	Host string
	// Threshold is the fraction of the window past which the agent is
	// told to write a ledger entry and compact.
	Threshold float64
	// Window overrides the model's window in tokens (0: the model table).
	Window int
	// Ledger and State are paths relative to the project; empty, the
	// ledger: and state: of the project's baton.yaml, else specs/ledger.md
	// and specs/state.yaml.
	Ledger string
	State  string
	// Strict blocks a manual compaction that has no ledger entry written
	// by the agent, instead of composing one.
	Strict bool
	// ContractTokens bounds a sub-agent's return.
	ContractTokens int
	// ResumeTokens bounds what a resumed session is given.
	ResumeTokens int
	// HistoryHome is the run history's folder ("" for the default); with
	// NoHistory the history is not touched.
	HistoryHome string
	NoHistory   bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = HostClaudeCode
	}
	if o.Threshold <= 0 || o.Threshold >= 1 {
		o.Threshold = DefaultThreshold
	}
	if o.Ledger == "" {
		o.Ledger = workflow.DefaultLedger
	}
	if o.State == "" {
		o.State = workflow.DefaultState
	}
	if o.ContractTokens <= 0 {
		o.ContractTokens = DefaultContractTokens
	}
	if o.ResumeTokens <= 0 {
		o.ResumeTokens = DefaultResumeTokens
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Payload is the JSON a host gives a hook on stdin: the fields of every
// event baton reads.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	// Trigger is PreCompact's and PostCompact's: manual or auto.
	Trigger string `json:"trigger"`
	// Source is SessionStart's: startup, resume, clear or compact.
	Source   string `json:"source"`
	Prompt   string `json:"prompt"`
	PromptID string `json:"prompt_id"`
	TurnID   string `json:"turn_id"`
	Model    string `json:"model"`

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`

	AgentID              string `json:"agent_id"`
	AgentType            string `json:"agent_type"`
	LastAssistantMessage string `json:"last_assistant_message"`
	StopHookActive       bool   `json:"stop_hook_active"`
}

// Result is what a hook answers: Output for the host on stdout (nil for
// nothing), Notes for stderr.
type Result struct {
	Output []byte
	Notes  []string
}

// Handle answers one hook event: event is the name the hook was installed
// under, stdin the host's JSON, project the folder the session works in.
// An error means the hook could not do its work; the caller says so on
// stderr and lets the host go on. Handle gives up when ctx ends.
func Handle(ctx context.Context, event string, stdin []byte, project string, o Options) (Result, error) {
	var p Payload
	if err := json.Unmarshal(stdin, &p); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrBadPayload, shortJSONErr(err))
	}
	o = o.declared(cmpOr(project, p.Cwd)).withDefaults()
	if p.Event == "" {
		p.Event = event
	}
	if p.SessionID == "" {
		return Result{}, fmt.Errorf("%w: no session_id", ErrBadPayload)
	}
	s, err := openSession(project, p, o)
	if err != nil {
		return Result{}, err
	}
	type answer struct {
		r   Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := s.dispatch(event)
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		s.index()
		a.r.Notes = s.result(nil).Notes // the history's notes too
		return a.r, a.err
	case <-ctx.Done():
		if event == EventPreCompact {
			// The compaction goes on; its log says it had no entry.
			s.log(runlog.Event{Type: runlog.Reset, Reason: cmpOr(p.Trigger, ReasonManual), Mode: "compact",
				Note: "the hook gave up before a ledger entry was on disk"})
		}
		return s.result(nil), fmt.Errorf("%s hook gave up after its time limit (%v); the session goes on", event, context.Cause(ctx))
	}
}

func (s *session) dispatch(event string) (Result, error) {
	switch event {
	case EventPreCompact:
		return s.preCompact()
	case EventPostCompact:
		return s.postCompact()
	case EventSessionStart:
		return s.sessionStart()
	case EventUserPromptSubmit:
		return s.threshold(EventUserPromptSubmit)
	case EventPostToolUse:
		return s.postToolUse()
	case EventSubagentStop:
		return s.subagentStop()
	}
	return Result{}, fmt.Errorf("unknown hook event %q; baton answers %s, %s, %s, %s, %s and %s", event,
		EventPreCompact, EventPostCompact, EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventSubagentStop)
}

func shortJSONErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	return err.Error()
}

// additional is a hook's JSON answer that adds context to the session.
func additional(event, text string) []byte {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": event, "additionalContext": text}})
	return b
}
