package localengine

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A journal is one item's record: each step's output as it succeeded, then
// the item's output. On disk it is a JSON line per record, each appended and
// fsynced before the step's output is used, so a crash loses at most the
// step that was running. A torn last line (a crash during the write) is cut
// off when the journal is opened.
type journal struct {
	f     *os.File // nil in memory
	steps map[string][][]byte
	done  *[]byte
}

type journalLine struct {
	Step string `json:"step,omitempty"`
	Out  []byte `json:"out"`
	Done bool   `json:"done,omitempty"`
}

// journalPath names an item's journal by the hash of its ID: IDs are
// chosen by callers and may hold any character.
func journalPath(dir, id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".jsonl")
}

func newMemJournal() *journal { return &journal{steps: map[string][][]byte{}} }

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &journal{f: f, steps: map[string][][]byte{}}
	good, err := j.load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	// Cut what follows the last whole line, and append after it.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// load reads the journal's lines and returns the offset after the last
// whole one.
func (j *journal) load(r io.Reader) (int64, error) {
	br := bufio.NewReader(r)
	var good int64
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A last line without its newline was cut short.
			return good, nil
		}
		if err != nil {
			return 0, err
		}
		var l journalLine
		if uerr := json.Unmarshal(bytes.TrimSpace(line), &l); uerr != nil {
			// A whole line that does not parse is not a torn write:
			// refuse rather than drop what follows it.
			return 0, fmt.Errorf("line at byte %d: %w", good, uerr)
		}
		j.apply(l)
		good += int64(len(line))
	}
}

func (j *journal) apply(l journalLine) {
	if l.Done {
		out := l.Out
		j.done = &out
		return
	}
	j.steps[l.Step] = append(j.steps[l.Step], l.Out)
}

func (j *journal) append(l journalLine) error {
	if j.f != nil {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		if _, err := j.f.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	j.apply(l)
	return nil
}

func (j *journal) step(key string, n int) ([]byte, bool) {
	outs := j.steps[key]
	if n < len(outs) {
		return outs[n], true
	}
	return nil, false
}

func (j *journal) record(key string, out []byte) error {
	return j.append(journalLine{Step: key, Out: out})
}

func (j *journal) output() ([]byte, bool) {
	if j.done == nil {
		return nil, false
	}
	return *j.done, true
}

func (j *journal) finish(out []byte) error { return j.append(journalLine{Done: true, Out: out}) }

func (j *journal) close() {
	if j.f != nil {
		j.f.Close()
	}
}
