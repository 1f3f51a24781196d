package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/baton-dev/baton/llm"
)

// A journal records, for one step, everything that is not a pure function
// of the workspace: the step's fresh context as it was first assembled,
// every model response keyed by the hash of its request, and every ledger
// entry a reset wrote. Each record is appended and fsynced before the runner
// uses it, so a run killed at any point resumes by replaying the journal:
// recorded calls are answered from it (no completed call is paid twice) and
// the first request that differs goes to the provider.
type journal struct {
	mu    sync.Mutex
	f     *os.File
	start *journalStart
	calls map[string][]*llm.Response // by request hash, oldest first
	// resets holds what earlier resets recorded, in order.
	resets  []journalReset
	nextRes int
	replays int
}

type journalRecord struct {
	Kind     string        `json:"kind"` // "start", "call", "reset"
	Hash     string        `json:"hash,omitempty"`
	Start    *journalStart `json:"start,omitempty"`
	Response *llm.Response `json:"response,omitempty"`
	Reset    *journalReset `json:"reset,omitempty"`
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
}

// openJournal reads what an earlier attempt of the step recorded, if
// anything, and opens the file for appending. A torn last line (the
// process died while writing it) is ignored: its call is simply made again.
func openJournal(path string) (*journal, error) {
	j := &journal{calls: map[string][]*llm.Response{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if len(data) > 0 {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var rec journalRecord
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue // a torn line
			}
			switch rec.Kind {
			case "start":
				j.start = rec.Start
			case "call":
				j.calls[rec.Hash] = append(j.calls[rec.Hash], rec.Response)
			case "reset":
				if rec.Reset != nil {
					j.resets = append(j.resets, *rec.Reset)
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j.f = f
	return j, nil
}

func (j *journal) close() error { return j.f.Close() }

func (j *journal) append(rec journalRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: sync: %w", err)
	}
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
	h, err := requestHash(req)
	if err != nil {
		return nil, false, err
	}
	j.mu.Lock()
	if rs := j.calls[h]; len(rs) > 0 {
		resp := rs[0]
		j.calls[h] = rs[1:]
		j.replays++
		j.mu.Unlock()
		return resp, true, nil
	}
	j.mu.Unlock()
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, false, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.append(journalRecord{Kind: "call", Hash: h, Response: resp}); err != nil {
		return nil, false, err
	}
	return resp, false, nil
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
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
