// Package runlock decides which process runs a workspace: one `baton run`
// or `baton resume` at a time. Two processes on one run would pay for the
// same calls twice, record every decision twice in state.yaml, and
// interleave their events in one run log.
//
// The lock is an OS file lock (flock on Unix, LockFileEx on Windows, through
// github.com/gofrs/flock) on <workspace>/.baton/run.lock, held for the run's
// whole life. Such a lock dies with its process, so a run killed with
// SIGKILL leaves nothing to clean up: the next run simply takes it. The
// holder also writes who it is to .baton/run.lock.json, so that a second
// process can say who is running the workspace; a dead holder's file is
// overwritten by the next holder.
//
// A file system that has no locks (some network and FUSE mounts) makes
// Acquire fail with one line saying so: baton writes state.yaml and the
// ledger under file locks too, so a run could not go far there anyway, and
// failing before the first paid call loses nothing.
package runlock

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
)

// ErrHeld is wrapped by the *HeldError Acquire returns when another
// process holds the workspace.
var ErrHeld = errors.New("another baton process is running this workspace")

// ErrUnsupported is wrapped by Acquire's error when the workspace's file
// system cannot lock files.
var ErrUnsupported = errors.New("the file system does not support file locks")

// Holder says who holds a workspace.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// Command is the holder's command line, as a person would type it.
	Command string `json:"command"`
	// Run is the run id, once the holder knows it.
	Run string `json:"run,omitempty"`
	// Session tells this holder apart from every other, even one with the
	// same pid on another host or after a reboot. The runner stamps it on
	// every run log event, which is how `baton ledger lint` sees two
	// processes writing one run.
	Session string `json:"session"`
}

// HeldError is what Acquire returns when the workspace is taken.
type HeldError struct {
	// Path is the lock file.
	Path string
	// Holder is who holds it, as its info file says; the zero Holder when
	// the file could not be read.
	Holder Holder
}

func (e *HeldError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("another baton process is running this workspace (it holds %s and has not said who it is); wait for it or stop it", e.Path)
	}
	who := fmt.Sprintf("pid %d on host %s, started %s", h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	if h.Command != "" {
		who += ", `" + h.Command + "`"
	}
	if h.Run != "" {
		who += ", run " + h.Run
	}
	return fmt.Sprintf("another baton process (%s) is running this workspace; wait for it or stop it", who)
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held workspace. Release it when the run returns. It is safe
// for concurrent use.
type Lock struct {
	fl   *flock.Flock
	info string

	mu     sync.Mutex
	holder Holder
}

// Path is the lock file of the workspace at root.
func Path(root string) string { return batondir.At(root).RunLock() }

// InfoPath is the file where the holder of root's lock says who it is.
func InfoPath(root string) string { return Path(root) + ".json" }

// Acquire takes the workspace at root for this process without waiting:
// when another process (or another Acquire in this one) holds it, it
// returns a *HeldError naming the holder. h fills in what the caller
// knows (Command, Run); PID, Host, Started and Session are this process's.
func Acquire(root string, h Holder) (*Lock, error) {
	path := Path(root)
	// The folder ignores itself for git, so a run shows nothing of baton's
	// own in `git status`.
	if err := batondir.Ensure(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		if unsupported(err) {
			err = fmt.Errorf("%w (%v)", ErrUnsupported, err)
		}
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if !ok {
		return nil, &HeldError{Path: path, Holder: readHolder(InfoPath(root))}
	}
	h.PID = os.Getpid()
	h.Host, _ = os.Hostname()
	h.Started = time.Now().UTC().Truncate(time.Second)
	h.Session = newSession()
	if h.Command == "" {
		h.Command = CommandLine()
	}
	l := &Lock{fl: fl, info: InfoPath(root), holder: h}
	if err := l.write(); err != nil {
		fl.Unlock()
		return nil, err
	}
	return l, nil
}

// Check returns a *HeldError naming the holder when another process holds
// the workspace at root, and nil when it is free (or when it cannot tell:
// Acquire then reports the problem). It takes nothing and writes nothing,
// so a command can refuse a busy workspace before it says what it would
// do; only Acquire's answer is authoritative.
func Check(root string) error {
	path := Path(root)
	if _, err := os.Stat(path); err != nil {
		return nil // no lock file: no run has ever held this workspace
	}
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil
	}
	if !ok {
		return &HeldError{Path: path, Holder: readHolder(InfoPath(root))}
	}
	_ = fl.Unlock()
	return nil
}

// Holder is who holds the lock: this process.
func (l *Lock) Holder() Holder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder
}

// SetRun records the run id in the info file, once the holder knows it.
func (l *Lock) SetRun(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder.Run == id {
		return nil
	}
	l.holder.Run = id
	return l.write()
}

func (l *Lock) write() error {
	data, _ := json.MarshalIndent(l.holder, "", "  ")
	if err := atomicfile.Write(l.info, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("run lock: %w", err)
	}
	return nil
}

// Release removes the info file and lets the workspace go. The lock file
// stays: removing it would let the next two processes lock two different
// files.
func (l *Lock) Release() error {
	// The info file goes first, while the lock still says it is ours.
	rerr := os.Remove(l.info)
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	if err := l.fl.Unlock(); err != nil {
		return fmt.Errorf("run lock %s: unlock: %w", l.fl.Path(), err)
	}
	if rerr != nil {
		return fmt.Errorf("run lock: %w", rerr)
	}
	return nil
}

// readHolder reads the holder's info file. A holder writes it right after
// taking the lock, so a file missing or half-read is retried for a moment
// before the holder is reported unknown.
func readHolder(path string) Holder {
	for range 20 {
		var h Holder
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &h) == nil && h.PID > 0 {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
	return Holder{}
}

// CommandLine is this process's command line, as short as a person would
// type it: the program's base name and its arguments, clipped.
func CommandLine() string {
	if len(os.Args) == 0 {
		return ""
	}
	s := strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

func newSession() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// unsupported reports whether err says the file system cannot lock.
func unsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP)
}
