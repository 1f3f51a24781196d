package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/baton-dev/baton/llm"
)

// A journal records, for one step, everything that is not a pure function
// of the workspace: the step's fresh context as it was first assembled,
// every model response keyed by the hash of its request, every tool call's
// result and effects (replay.go), every ledger entry a reset wrote, and the
// provider's refusals. Each record is appended and fsynced before the runner
// uses it, so a run stopped at any point resumes by replaying the journal:
// recorded calls are answered from it (no completed call is paid twice),
// recorded tool calls are not run again, and the first request that differs
// goes to the provider.
type journal struct {
	mu    sync.Mutex
	f     *os.File
	start *journalStart
	calls map[string][]*llm.Response // by request hash, oldest first
	// resets holds what earlier resets recorded, in order.
	resets  []journalReset
	nextRes int
	replays int
	// tools holds recorded tool calls by toolKey, oldest first.
	tools map[string][]journalTool
	// refused holds, by request hash, what the provider answered when it
	// refused the request on an earlier attempt of the step.
	refused map[string]string
	// ending is the hash state.yaml had when an earlier attempt of the step
	// was about to record the step's end in it ("" when none was).
	ending string
	// last is the hash the next line chains from.
	last string
}

type journalRecord struct {
	Kind     string        `json:"kind"` // "start", "call", "reset", "tool", "refused", "ending"
	Hash     string        `json:"hash,omitempty"`
	Start    *journalStart `json:"start,omitempty"`
	Response *llm.Response `json:"response,omitempty"`
	Reset    *journalReset `json:"reset,omitempty"`
	Tool     *journalTool  `json:"tool,omitempty"`
	// Refused is the provider's answer to a request it refused.
	Refused string `json:"refused,omitempty"`
}

// journalReset is a reset as it happened: the ledger entry written and the
// fresh session's context, which a resumed step reuses rather than rebuilds
// from a workspace its later tool calls may already have changed.
type journalReset struct {
	Ledger string `json:"ledger"`
	System string `json:"system"`
	User   string `json:"user"`
	// Usage is what asking for the ledger entry cost, so a resumed step
	// accounts for it without asking again.
	Usage llm.Usage `json:"usage"`
}

type journalStart struct {
	System string `json:"system"`
	User   string `json:"user"`
	Hash   string `json:"hash"`
	Seed   string `json:"seed,omitempty"`
	// Tokens is the context's size as counted then (0 in journals written
	// before it was kept).
	Tokens int `json:"tokens,omitempty"`
}

// The checksum chain. Every line of a journal is
//
//	{"prev":"<hex>","sum":"<hex>","rec":<the record>}
//
// where prev is the sha256 of the previous line (for the first line, of the
// step's genesis string, which names the run, the step number and the
// skill) and sum is the sha256 of prev, a newline and the record's bytes. A
// line edited, inserted, removed or copied from another step's journal
// breaks the chain, and a resume refuses the journal rather than replay a
// system prompt or a response that no model sent. The chain is not a
// signature: whoever knows this scheme can rebuild it; what it stops is an
// agent or a tool editing a record, planting a journal for a later step or
// copying one from another step.
//
// Journals written before the chain existed do not load: no release wrote
// them.

// journalGenesis is the hash the first line of a step's journal chains
// from.
func journalGenesis(runID string, step int, skill string) string {
	return sha256Hex([]byte(fmt.Sprintf("baton journal v1\nrun %s\nstep %d\nskill %s\n", runID, step, skill)))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func recordSum(prev string, rec []byte) string {
	return sha256Hex(append([]byte(prev+"\n"), rec...))
}

type journalLine struct {
	Prev string          `json:"prev"`
	Sum  string          `json:"sum"`
	Rec  json.RawMessage `json:"rec"`
}

// ErrJournalChain is wrapped when a journal's checksum chain is broken.
var ErrJournalChain = errors.New("does not match its checksum chain (edited or forged); refusing to resume")

// openJournal reads what an earlier attempt of the step recorded, if
// anything, and opens the file for appending. name is how messages call
// the file (workspace-relative); genesis is journalGenesis of the step. A
// torn last line (the process died while writing it, so it has no newline)
// is cut off: its call is simply made again. Any other line that breaks the
// chain stops the step before anything is sent.
func openJournal(path, name, genesis string) (*journal, error) {
	j := &journal{calls: map[string][]*llm.Response{}, tools: map[string][]journalTool{}, refused: map[string]string{}, last: genesis}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("journal %s: %w", name, err)
	}
	complete := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		complete = i + 1 // a torn last line
	}
	for n, line := range bytes.SplitAfter(data[:complete], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		rec, err := j.verify(line)
		if err != nil {
			return nil, fmt.Errorf("journal %s: record %d %w", name, n+1, err)
		}
		j.last = sha256Hex(line)
		switch rec.Kind {
		case "start":
			j.start = rec.Start
		case "call":
			j.calls[rec.Hash] = append(j.calls[rec.Hash], rec.Response)
		case "reset":
			if rec.Reset != nil {
				j.resets = append(j.resets, *rec.Reset)
			}
		case "tool":
			j.tools[rec.Hash] = append(j.tools[rec.Hash], *rec.Tool)
		case "refused":
			j.refused[rec.Hash] = rec.Refused
		case "ending":
			j.ending = rec.Hash
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal %s: %w", name, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", name, err)
	}
	// Appends go after the last complete line, over a torn one.
	if err := f.Truncate(int64(complete)); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", name, err)
	}
	if _, err := f.Seek(int64(complete), io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", name, err)
	}
	j.f = f
	return j, nil
}

// verify checks one line against the chain so far and decodes its record.
func (j *journal) verify(line []byte) (journalRecord, error) {
	var l journalLine
	var rec journalRecord
	if json.Unmarshal(line, &l) != nil || l.Prev != j.last || len(l.Rec) == 0 || l.Sum != recordSum(l.Prev, l.Rec) {
		return rec, ErrJournalChain
	}
	if json.Unmarshal(l.Rec, &rec) != nil {
		return rec, ErrJournalChain
	}
	if rec.Kind == "start" && rec.Start == nil || rec.Kind == "call" && rec.Response == nil || rec.Kind == "tool" && rec.Tool == nil {
		return rec, ErrJournalChain
	}
	return rec, nil
}

func (j *journal) close() error { return j.f.Close() }

// append writes rec as the chain's next line. The line is built by hand so
// that the bytes summed are the bytes written.
func (j *journal) append(rec journalRecord) error {
	body, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	line := make([]byte, 0, len(body)+160)
	line = append(line, `{"prev":"`...)
	line = append(line, j.last...)
	line = append(line, `","sum":"`...)
	line = append(line, recordSum(j.last, body)...)
	line = append(line, `","rec":`...)
	line = append(line, body...)
	line = append(line, '}')
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: sync: %w", err)
	}
	j.last = sha256Hex(line)
	return nil
}

// recordStart keeps the step's first context, or returns the one an
// earlier attempt recorded, so a resumed step asks exactly what it asked
// before even if state.yaml changed since.
func (j *journal) recordStart(s journalStart) (journalStart, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.start != nil {
		return *j.start, nil
	}
	j.start = &s
	return s, j.append(journalRecord{Kind: "start", Start: &s})
}

// call answers req from the journal when an earlier attempt recorded the
// same request, and otherwise sends it and records the response before
// returning it.
func (j *journal) call(ctx context.Context, m llm.Model, req *llm.Request) (*llm.Response, bool, error) {
	resp, _, replayed, err := j.callHashed(ctx, m, req)
	return resp, replayed, err
}

// callHashed is call that also returns the request's hash, which keys the
// tool calls of the response (replay.go).
func (j *journal) callHashed(ctx context.Context, m llm.Model, req *llm.Request) (*llm.Response, string, bool, error) {
	h, err := requestHash(req)
	if err != nil {
		return nil, "", false, err
	}
	j.mu.Lock()
	if rs := j.calls[h]; len(rs) > 0 {
		resp := rs[0]
		j.calls[h] = rs[1:]
		j.replays++
		j.mu.Unlock()
		return resp, h, true, nil
	}
	j.mu.Unlock()
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, h, false, j.refusal(ctx, h, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.append(journalRecord{Kind: "call", Hash: h, Response: resp}); err != nil {
		return nil, h, false, err
	}
	return resp, h, false, nil
}

// refusal records a provider's refusal of request h (an answer that retrying
// cannot change) and returns err, marked as a repeat when an earlier attempt
// of the step was refused the same request: resuming again would only
// repeat it.
func (j *journal) refusal(ctx context.Context, h string, err error) error {
	var pe *llm.ProviderError
	if ctx.Err() != nil || !errors.As(err, &pe) || pe.IsRetryable() {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, before := j.refused[h]; before {
		return &repeatedError{err: err}
	}
	j.refused[h] = err.Error()
	if aerr := j.append(journalRecord{Kind: "refused", Hash: h, Refused: err.Error()}); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

// recordedReset returns what an earlier attempt recorded for this step's
// next reset, if anything.
func (j *journal) recordedReset() (journalReset, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.nextRes < len(j.resets) {
		r := j.resets[j.nextRes]
		j.nextRes++
		return r, true
	}
	return journalReset{}, false
}

func (j *journal) recordReset(r journalReset) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.resets = append(j.resets, r)
	j.nextRes = len(j.resets)
	return j.append(journalRecord{Kind: "reset", Reset: &r})
}

// requestHash content-addresses a request: everything that shapes the
// answer, nothing that does not.
func requestHash(req *llm.Request) (string, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("hash request: %w", err)
	}
	return sha256Hex(b), nil
}
