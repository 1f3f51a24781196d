// Package runlog writes and reads the run log: the record `baton run` keeps of
// what it did, which `baton ledger lint` later reads to find red flags. It is a
// public file format; users' scripts may read it, so fields are only ever
// added, never renamed or repurposed.
//
// # File
//
// The log is JSON Lines: one JSON object per line, UTF-8, each line ended by
// "\n". The runner keeps it at .baton/runs/<run id>/events.jsonl. Every event
// is appended with O_APPEND and fsynced before the runner goes on, so a run
// killed with SIGKILL loses at most the line it was writing. Readers tolerate
// such a torn last line and report it; a malformed line anywhere else is an
// error in the file. Readers must ignore keys and event types they do not
// know, so that older tools read newer logs.
//
// # Fields
//
// Every event has:
//
//	time   RFC 3339 time the event happened (UTC, nanoseconds)
//	run    the run id
//	type   one of the event types below
//
// and, where they apply, phase, skill and step (the step id), and session
// (the baton process that wrote it; a resume starts a new one). Empty and zero
// fields are left out. The other fields by event type:
//
//	run_start            phases (the ordered phase list: the phase→boundary map,
//	                     fixed for the run), ledger_path, window_tokens,
//	                     threshold_tokens
//	run_end              status ("ok": the workflow reached done), note; a
//	                     run that fails or is interrupted writes no run_end
//	                     (its last step_end says how it stopped), since a
//	                     resume may still finish it
//	phase_start          phase
//	phase_end            phase
//	boundary_evaluation  phase (the phase ending), next_phase, projected_tokens,
//	                     threshold_tokens, window_tokens, decision ("reset" |
//	                     "continue")
//	threshold_crossed    projected_tokens, threshold_tokens, window_tokens
//	miss_note            note, misses (the count of misses in a row in the phase)
//	reset                reason ("threshold" | "boundary" |
//	                     "forced_after_misses" | "hard_limit"; for a host's
//	                     compaction that baton's hooks logged, the host's
//	                     trigger: "manual" | "auto"), mode ("fresh" |
//	                     "compact"), ledger_time (the heading time of the ledger
//	                     entry the new session was seeded from),
//	                     context_tokens, window_tokens, context_fraction
//	                     (context_tokens / window_tokens at the reset),
//	                     replayed (true when a resumed step took the reset
//	                     from its journal: it was logged when it happened)
//	resume               from ("ledger" | "transcript" | "memory" | ...),
//	                     ledger_time
//	ledger_written       ledger_path, ledger_time, complete (true | false),
//	                     missing (the fields an incomplete entry lacked)
//	subagent_return      tokens, contract_tokens, action ("accepted" |
//	                     "re_requested" | "truncated" | "ingested_oversize"),
//	                     spill_path (the file that keeps the whole return when
//	                     it was over its bound), note (the sub-agent's goal)
//	step_start           skill, step
//	step_end             skill, step, input_hash (content hash of the step's
//	                     inputs), usage, status ("ok" | "failed" |
//	                     "interrupted"; only "ok" ends the step: a failed or
//	                     interrupted one resumes under its own step id), note
//	                     (for a failure: its kind first, such as
//	                     "provider_unavailable: …" or "max_turns: …"), next
//	                     (for "ok": where the run goes on, {"phase": the
//	                     phase's index in the workflow, "skill": the next
//	                     skill or "done"}; logs of earlier batons hold it in
//	                     note as "<phase index> <skill>")
//	model_call           model, input_hash, usage, context_tokens (what the
//	                     request sent: input + cache read + cache write
//	                     tokens), turn (the step's turn, from 1), subagent
//	                     (true for a sub-agent's call, whose context is its
//	                     own), replayed (true for a call a resumed step
//	                     answered from its journal: it carries no usage,
//	                     since it was logged and paid when first made), note
//	tool_call            tool (its name), status ("ok" | "error"), note (the
//	                     start of the error), turn, subagent, replayed (true
//	                     when a resumed step took the result from its
//	                     journal: the call was logged when it ran)
//
// usage is an object: input_tokens, output_tokens, cache_read_tokens,
// cache_write_tokens. Summing the usage of model_call events gives what the
// run paid; logs written before replayed existed also carry usage on a
// replayed call (its note says "answered from the step journal").
package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event types. The runner writes these; readers must tolerate others.
const (
	RunStart           = "run_start"
	RunEnd             = "run_end"
	PhaseStart         = "phase_start"
	PhaseEnd           = "phase_end"
	BoundaryEvaluation = "boundary_evaluation"
	ThresholdCrossed   = "threshold_crossed"
	MissNote           = "miss_note"
	Reset              = "reset"
	Resume             = "resume"
	LedgerWritten      = "ledger_written"
	SubagentReturn     = "subagent_return"
	StepStart          = "step_start"
	StepEnd            = "step_end"
	ModelCall          = "model_call"
	ToolCall           = "tool_call"
)

// Values of Event.Decision, Event.Reason, Event.From and Event.Action.
const (
	DecisionReset    = "reset"
	DecisionContinue = "continue"

	ReasonThreshold         = "threshold"
	ReasonBoundary          = "boundary"
	ReasonForcedAfterMisses = "forced_after_misses"
	ReasonHardLimit         = "hard_limit"

	FromLedger     = "ledger"
	FromTranscript = "transcript"
	FromMemory     = "memory"

	ActionAccepted         = "accepted"
	ActionReRequested      = "re_requested"
	ActionTruncated        = "truncated"
	ActionIngestedOversize = "ingested_oversize"

	ToolOK    = "ok"
	ToolError = "error"
)

// Usage is what a provider reported for a call or a step.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Event is one line of the run log. The package comment says which fields
// each type uses.
type Event struct {
	Time  time.Time `json:"time"`
	Run   string    `json:"run"`
	Type  string    `json:"type"`
	Phase string    `json:"phase,omitempty"`
	Skill string    `json:"skill,omitempty"`
	Step  string    `json:"step,omitempty"`

	Phases     []string `json:"phases,omitempty"`
	NextPhase  string   `json:"next_phase,omitempty"`
	LedgerPath string   `json:"ledger_path,omitempty"`
	Status     string   `json:"status,omitempty"`
	Note       string   `json:"note,omitempty"`
	Misses     int      `json:"misses,omitempty"`

	ProjectedTokens int     `json:"projected_tokens,omitempty"`
	ThresholdTokens int     `json:"threshold_tokens,omitempty"`
	WindowTokens    int     `json:"window_tokens,omitempty"`
	ContextTokens   int     `json:"context_tokens,omitempty"`
	ContextFraction float64 `json:"context_fraction,omitempty"`
	Decision        string  `json:"decision,omitempty"`

	Reason     string    `json:"reason,omitempty"`
	Mode       string    `json:"mode,omitempty"`
	LedgerTime time.Time `json:"ledger_time,omitzero"`
	From       string    `json:"from,omitempty"`
	// Complete is a pointer so that "complete": false is written: a
	// ledger_written event without it would read as unknown, not as false.
	Complete *bool    `json:"complete,omitempty"`
	Missing  []string `json:"missing,omitempty"`

	Tokens         int    `json:"tokens,omitempty"`
	ContractTokens int    `json:"contract_tokens,omitempty"`
	Action         string `json:"action,omitempty"`

	Model     string `json:"model,omitempty"`
	InputHash string `json:"input_hash,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`

	// Turn is the step's turn (1-based) a model or tool call belongs to.
	Turn int `json:"turn,omitempty"`
	// Subagent marks a call a sub-agent made: its context is the
	// sub-agent's own session, not the step's.
	Subagent bool `json:"subagent,omitempty"`
	// Replayed marks a call a resumed step answered from its journal: it
	// was logged and paid when it was first made, so it carries no usage.
	Replayed bool   `json:"replayed,omitempty"`
	Tool     string `json:"tool,omitempty"`
	// SpillPath is the workspace-relative file that holds a sub-agent's
	// whole return when it went over its bound.
	SpillPath string `json:"spill_path,omitempty"`

	// Next is where a run goes after a step that ended "ok": what a resume
	// starts from.
	Next *Next `json:"next,omitempty"`

	// Session is the baton process that wrote the event (the run lock's
	// holder session): a resumed run's events carry a new one, and events
	// of two sessions interleaved mean two processes wrote the run at once.
	Session string `json:"session,omitempty"`

	// Path and Line say where Read found the event, for messages. They are
	// not part of the file.
	Path string `json:"-"`
	Line int    `json:"-"`
}

// Next is the step a run takes after a step_end "ok".
type Next struct {
	// Phase is the index of the phase in the workflow's phases.
	Phase int `json:"phase"`
	// Skill is the next step's skill, or "done" when the workflow is.
	Skill string `json:"skill"`
}

// Bool returns a pointer to b, for Event.Complete.
func Bool(b bool) *bool { return &b }

// ErrInvalidEvent is returned by Write for an event missing its type or run.
var ErrInvalidEvent = errors.New("invalid run log event")

// maxLine bounds one event; a longer line is reported, not read into memory
// without limit.
const maxLine = 4 << 20

// Problem is one line of the log that could not be read.
type Problem struct {
	Path string
	Line int
	// Torn is true for an unfinished line: what a writer killed mid-write
	// leaves, tolerated rather than an error in the file. It is the last
	// line, or a line the next run's writer started a new line after.
	Torn bool
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg) }

// Writer appends events to a run log. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Open opens path for appending, creating it and its directory if needed. If
// the file ends in a torn line, a newline is written first so the next event
// starts on a line of its own and the torn line stays isolated.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("run log %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run log %s: %w", path, err)
	}
	torn, err := endsTorn(path)
	if err == nil && torn {
		_, err = f.Write([]byte("\n"))
		if err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("run log %s: %w", path, err)
	}
	return &Writer{f: f, path: path}, nil
}

// endsTorn reports whether the file is non-empty and lacks a final newline.
func endsTorn(path string) (bool, error) {
	r, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil || st.Size() == 0 {
		return false, err
	}
	b := make([]byte, 1)
	if _, err := r.ReadAt(b, st.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// Write appends e as one line and fsyncs, so that once Write returns the event
// survives a crash. A zero Time is set to now.
func (w *Writer) Write(e Event) error {
	if e.Type == "" || e.Run == "" {
		return fmt.Errorf("run log %s: %w: type and run are required", w.path, ErrInvalidEvent)
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("run log %s: %s event: %w", w.path, e.Type, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("run log %s: %w", w.path, os.ErrClosed)
	}
	// One write call per event: with O_APPEND the line lands whole at the
	// end even if another process appends too.
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("run log %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("run log %s: sync: %w", w.path, err)
	}
	return nil
}

// Close closes the file. Closing twice is harmless.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("run log %s: %w", w.path, err)
	}
	return nil
}

// Read reads the run log at path. Lines that are not events are returned as
// problems with their line numbers; an unfinished line is a problem with Torn
// set. The error is only for a file that cannot be read at all.
func Read(path string) ([]Event, []Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("run log: %w", err)
	}
	defer f.Close()
	events, problems, err := Decode(f, path)
	if err != nil {
		return nil, nil, fmt.Errorf("run log %s: %w", path, err)
	}
	return events, problems, nil
}

// Decode reads a run log from r; path is used only in problems and events.
func Decode(r io.Reader, path string) ([]Event, []Problem, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		events   []Event
		problems []Problem
		line     int
	)
	for {
		raw, complete, err := readLine(br)
		if err != nil {
			return nil, nil, err
		}
		if raw == nil && !complete {
			break
		}
		line++
		p := Problem{Path: path, Line: line, Torn: !complete}
		if len(raw) > maxLine {
			p.Msg = fmt.Sprintf("line is longer than %d bytes", maxLine)
			problems = append(problems, p)
			continue
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			if !complete {
				break
			}
			continue
		}
		var e Event
		if err := json.Unmarshal(trimmed, &e); err != nil {
			p.Msg = "not a JSON event: " + shortJSONError(err)
			// A line cut short mid-write is a prefix of an event: the JSON
			// ends early. After a resume the writer starts a new line
			// below it, so such a line may also sit in the middle.
			if p.Torn || endsEarly(err, trimmed) {
				p.Torn = true
				p.Msg = "unfinished line (the writer was probably killed mid-write)"
			}
			problems = append(problems, p)
			continue
		}
		if e.Type == "" {
			p.Msg = `event has no "type"`
			problems = append(problems, p)
			continue
		}
		e.Path, e.Line = path, line
		events = append(events, e)
		if !complete {
			break
		}
	}
	return events, problems, nil
}

// readLine returns the next line without its newline. complete is false for
// a last line with no newline; (nil, false) means end of input. Lines longer
// than maxLine are drained and returned truncated to maxLine+1 bytes so the
// caller can report them.
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) <= maxLine {
			buf = append(buf, chunk...)
		}
		switch {
		case err == nil:
			if len(buf) > maxLine {
				return buf, true, nil
			}
			return bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r")), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return nil, false, nil
			}
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// endsEarly reports whether data is a JSON object cut off before its end,
// rather than text that was never JSON.
func endsEarly(err error, data []byte) bool {
	var se *json.SyntaxError
	return data[0] == '{' && errors.As(err, &se) && se.Offset >= int64(len(data))
}

// shortJSONError keeps a decoder message to one line.
func shortJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (byte %d)", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type (%s)", te.Field, te.Value)
	}
	return err.Error()
}
