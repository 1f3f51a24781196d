package hostgov

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/baton-dev/baton/internal/writepolicy"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/filelock"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/tokens"
)

// SessionsDir is the folder, under a project's .baton, of the host
// sessions' logs.
const SessionsDir = batondir.SessionsName

// session is one hook call's view of a host session.
type session struct {
	o       Options
	p       Payload
	project string // absolute
	id      string // the host's session id, or a hash of it
	dir     string // <project>/.baton/sessions/<id>
	// mu guards notes and logged: a hook that gives up at its time limit
	// reads them while its worker may still be writing.
	mu     sync.Mutex
	notes  []string
	logged bool
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// SessionID is the folder name of a host's session id: the id itself when
// it is a plain one, else a hash of it, so that nothing a host sends can
// name a path.
func SessionID(hostID string) string {
	if safeID.MatchString(hostID) {
		return hostID
	}
	sum := sha256.Sum256([]byte(hostID))
	return "s-" + hex.EncodeToString(sum[:8])
}

func openSession(project string, p Payload, o Options) (*session, error) {
	if project == "" {
		project = p.Cwd
	}
	if project == "" {
		return nil, fmt.Errorf("%w: no cwd and no project folder", ErrBadPayload)
	}
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", project, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("project %s is not a folder", abs)
	}
	id := SessionID(p.SessionID)
	return &session{o: o, p: p, project: abs, id: id,
		dir: batondir.At(abs).Session(id)}, nil
}

func (s *session) now() time.Time { return s.o.Now().UTC() }

func (s *session) note(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, a...))
}

func (s *session) result(out []byte) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Result{Output: out, Notes: append([]string(nil), s.notes...)}
}

// ensureDir makes the session's folder, and .baton with its ignore file.
func (s *session) ensureDir() error {
	if err := batondir.Ensure(filepath.Join(s.project, batondir.Name)); err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}

// log appends events to the session's run log, starting it with a
// run_start the first time. A failure is a note, not an error: the
// host's session matters more than baton's record of it.
func (s *session) log(events ...runlog.Event) {
	if err := s.ensureDir(); err != nil {
		s.note("baton: cannot record the session: %v", err)
		return
	}
	path := filepath.Join(s.dir, batondir.RunLogName)
	// O_EXCL decides which of two hooks running at once starts the log.
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.Close()
		events = append([]runlog.Event{{Type: runlog.RunStart, LedgerPath: filepath.ToSlash(s.o.Ledger),
			Note: s.o.Host + " session " + s.p.SessionID}}, events...)
	}
	w, err := runlog.Open(path)
	if err != nil {
		s.note("baton: cannot record the session: %v", err)
		return
	}
	defer w.Close()
	for _, e := range events {
		e.Run = s.id
		if e.Time.IsZero() {
			e.Time = s.now()
		}
		if err := w.Write(e); err != nil {
			s.note("baton: cannot record the session: %v", err)
			return
		}
	}
	s.mu.Lock()
	s.logged = true
	s.mu.Unlock()
}

// index puts the session's row in the run history, when anything was
// logged.
func (s *session) index() {
	s.mu.Lock()
	logged := s.logged
	s.mu.Unlock()
	if !logged || s.o.NoHistory {
		return
	}
	db, err := history.Open(s.o.HistoryHome)
	if err != nil {
		s.note("baton: run history: %v", err)
		return
	}
	defer db.Close()
	if err := db.IndexSessionDir(s.dir); err != nil {
		s.note("baton: run history: %v", err)
	}
}

// sessionState is what one hook call leaves for the next, beside the log.
type sessionState struct {
	// Crossed is set when the threshold was first announced since the
	// last compaction; Misses counts the turns after that still over it.
	Crossed bool `json:"crossed,omitempty"`
	Misses  int  `json:"misses,omitempty"`
	// Announced is the prompt the threshold was last announced for: once
	// per turn is enough.
	Announced string `json:"announced,omitempty"`
	// LastReset is the time of the last compaction or clear baton saw.
	LastReset time.Time `json:"last_reset,omitzero"`
	// Covered is the heading time of the ledger entry that covered the
	// last compaction (the agent's, or the one baton composed for it). It
	// is written before that compaction, so it never counts as written
	// since it: headings have whole seconds, and one composed a moment
	// before a reset would otherwise pass for the agent's next entry.
	Covered time.Time `json:"covered,omitzero"`
	// Pending are lines for the agent that no hook could give it when
	// they arose (a sub-agent that ran in the background ends with no
	// hook of the parent's); the next hook that can add context does.
	Pending []string  `json:"pending,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

// withState runs f on the session's state under its lock and saves what f
// leaves.
func (s *session) withState(f func(*sessionState)) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	path := filepath.Join(s.dir, "state.json")
	unlock, err := filelock.Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	var st sessionState
	old, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(old, &st) // a damaged state starts afresh
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	if st.Started.IsZero() {
		st.Started = s.now()
	}
	f(&st)
	data, _ := json.Marshal(st)
	if bytes.Equal(data, old) {
		return nil
	}
	return atomicfile.Write(path, data, 0o644)
}

// measure is the session's context against its window.
type measure struct {
	t         *Transcript
	context   int
	window    int
	threshold int
}

func (m measure) fraction() float64 {
	if m.window == 0 {
		return 0
	}
	return float64(m.context) / float64(m.window)
}

// quickRead is how much of a transcript a hook that only measures reads
// first: the last usage is near the end, and such hooks run on every
// tool call.
const quickRead = 512 << 10

// measure reads the transcript (its end, for a hook that only measures;
// all that MaxTranscriptRead allows when full, or when the end has no
// usage); a missing or unreadable one leaves the context unknown (0) and
// says why in a note.
func (s *session) measure(full bool) measure {
	var m measure
	if s.p.TranscriptPath != "" {
		limit := int64(0)
		if !full {
			limit = quickRead
		}
		t, err := ReadTranscript(s.p.TranscriptPath, limit)
		if err == nil && !full && t.Truncated && t.UsageTokens == 0 {
			t, err = ReadTranscript(s.p.TranscriptPath, 0)
		}
		if err != nil {
			s.note("baton: %v; the context is unknown", err)
		} else {
			m.t, m.context = t, t.ContextTokens()
		}
	}
	model := s.p.Model
	if m.t != nil && m.t.Model != "" {
		model = m.t.Model
	}
	m.window, _ = tokens.Window(model, s.o.Window)
	if s.o.Window == 0 && m.t != nil && m.t.Window > 0 {
		m.window = m.t.Window // the host's own figure
	}
	m.threshold = int(s.o.Threshold * float64(m.window))
	return m
}

// confine is where a hook's writes into the project are checked: the path
// must stay inside the project, with no symlink leading out, and out of
// what baton and the user's tools trust (git's folder, host and editor
// configuration, skills and workflows), by the write policy every entry
// point shares.
func confine(project, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("empty path")
	}
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: a path inside the project is required", rel)
	}
	clean := filepath.ToSlash(filepath.Clean(rel))
	if err := writepolicy.CheckWrite(project, clean); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(project)
	if err != nil {
		return "", err
	}
	defer root.Close()
	dir := filepath.Dir(clean)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	if _, err := root.Stat(dir); err != nil {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	return filepath.Join(project, filepath.FromSlash(clean)), nil
}
