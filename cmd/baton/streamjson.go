package main

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

// streamJSON writes ask's `--output stream-json`: one JSON object per line
// on stdout, for a tool to follow a run. Every line has "type" and
// "elapsed_ms" (since ask began, finding the provider included); the other fields depend on the
// type. The fields are a public contract, documented in docs/ask.md:
//
//	phase    phase (plan, assemble, dispatch, synthesis), status (start or
//	         end), duration_ms on end
//	subtask  phase, index (0-based, as in the record), status (queued,
//	         self, running, ok, failed, skipped), task, error when failed
//	retry    phase, attempt (the one that failed, 1-based), wait_ms, error
//	usage    phase, model, attempts, usage: one line per model call that
//	         answered, as the provider reported it
//	text     delta: a piece of the synthesis (with --stream)
//	restart  discarded_chars: the synthesis was retried and starts again;
//	         drop the text deltas received so far
//	warning  message, as in the record's warnings
//	record   record: the run record, as --json prints it; always last
//
// Lines are written whole under a lock: sub-agents report from several
// goroutines at once.
type streamJSON struct {
	mu    sync.Mutex
	enc   *json.Encoder
	now   func() time.Time
	start time.Time
	// phase is the phase running and since when; "" after synthesis
	// ended. Phases end only implicitly (the next one starts), except
	// synthesis, so the writer closes them itself.
	phase      string
	phaseStart time.Time
	chars      int // text passed on since the last restart
}

// streamLine is one line of stream-json. Fields left at their zero value
// are left out, except type and elapsed_ms.
type streamLine struct {
	Type           string              `json:"type"`
	ElapsedMS      int64               `json:"elapsed_ms"`
	Phase          string              `json:"phase,omitempty"`
	Status         string              `json:"status,omitempty"`
	Index          *int                `json:"index,omitempty"`
	Task           string              `json:"task,omitempty"`
	Error          string              `json:"error,omitempty"`
	Message        string              `json:"message,omitempty"`
	Attempt        int                 `json:"attempt,omitempty"`
	WaitMS         *int64              `json:"wait_ms,omitempty"`
	DurationMS     *int64              `json:"duration_ms,omitempty"`
	Model          string              `json:"model,omitempty"`
	Attempts       int                 `json:"attempts,omitempty"`
	Usage          *llm.Usage          `json:"usage,omitempty"`
	Delta          string              `json:"delta,omitempty"`
	DiscardedChars *int                `json:"discarded_chars,omitempty"`
	Record         *orchestrate.Record `json:"record,omitempty"`
}

func newStreamJSON(w io.Writer, now func() time.Time) *streamJSON {
	if now == nil {
		now = time.Now
	}
	enc := json.NewEncoder(w)
	// Answers quote code and markup; \u003c for every < helps no reader.
	enc.SetEscapeHTML(false)
	return &streamJSON{enc: enc, now: now, start: now()}
}

// write emits one line; the caller holds s.mu.
func (s *streamJSON) write(l streamLine) {
	l.ElapsedMS = s.now().Sub(s.start).Milliseconds()
	// A write error (a closed pipe) is not worth failing a paid run for:
	// the record is saved all the same.
	_ = s.enc.Encode(l)
}

// enter makes phase the running one, ending the one before. The caller
// holds s.mu.
func (s *streamJSON) enter(phase string) {
	if phase == "" || phase == s.phase {
		return
	}
	s.end()
	s.phase, s.phaseStart = phase, s.now()
	s.write(streamLine{Type: "phase", Phase: phase, Status: "start"})
}

// end ends the running phase, if any. The caller holds s.mu.
func (s *streamJSON) end() {
	if s.phase == "" {
		return
	}
	d := s.now().Sub(s.phaseStart).Milliseconds()
	s.write(streamLine{Type: "phase", Phase: s.phase, Status: "end", DurationMS: &d})
	s.phase = ""
}

// event is ask's Config.Progress.
func (s *streamJSON) event(e orchestrate.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enter(e.Phase)
	if e.Index < 0 {
		if e.Status == "ok" || e.Status == "failed" {
			s.end()
		}
		return
	}
	i := e.Index
	l := streamLine{Type: "subtask", Phase: e.Phase, Index: &i, Status: e.Status}
	if e.Status == "failed" {
		l.Error = e.Message
	} else {
		l.Task = e.Message
	}
	s.write(l)
}

// retry is the model's retry notice (modelFlags.onRetry).
func (s *streamJSON) retry(attempt int, wait time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := wait.Milliseconds()
	s.write(streamLine{Type: "retry", Phase: s.phase, Attempt: attempt, WaitMS: &ms, Error: oneLineErr(err)})
}

// text is ask's Config.OnText.
func (s *streamJSON) text(delta string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chars += len([]rune(delta))
	s.write(streamLine{Type: "text", Phase: s.phase, Delta: delta})
}

// restart is ask's Config.OnRestart.
func (s *streamJSON) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.chars
	s.chars = 0
	s.write(streamLine{Type: "restart", Phase: s.phase, DiscardedChars: &n})
}

// finish ends the running phase and writes the warnings and the record,
// the last line.
func (s *streamJSON) finish(rec *orchestrate.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end()
	for _, w := range rec.Warnings {
		s.write(streamLine{Type: "warning", Message: w})
	}
	s.write(streamLine{Type: "record", Record: rec})
}

// call reports the usage of a call that answered as a usage line. It is
// told of the whole retrying call, so one line is one call however many
// attempts it took (attempts says how many).
func (s *streamJSON) call(req *llm.Request, resp *llm.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	usage := resp.Usage
	model := resp.Model
	if model == "" {
		model = req.Model
	}
	s.write(streamLine{Type: "usage", Phase: s.phase, Model: model, Attempts: resp.Attempts, Usage: &usage})
}
