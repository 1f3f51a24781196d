package runlock_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/runlock"
)

func TestSecondAcquireFailsNamingTheHolder(t *testing.T) {
	root := t.TempDir()
	l, err := runlock.Acquire(root, runlock.Holder{Command: "baton run"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetRun("20261201T100203Z-abcdef"); err != nil {
		t.Fatal(err)
	}
	_, err = runlock.Acquire(root, runlock.Holder{Command: "baton resume"})
	var held *runlock.HeldError
	if !errors.Is(err, runlock.ErrHeld) || !errors.As(err, &held) {
		t.Fatalf("second Acquire = %v, want a HeldError", err)
	}
	if held.Holder.PID != os.Getpid() || held.Holder.Session != l.Holder().Session || held.Holder.Run != "20261201T100203Z-abcdef" {
		t.Errorf("holder = %+v, want this process's lock %+v", held.Holder, l.Holder())
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("pid %d on host ", os.Getpid()), "`baton run`", "wait for it or stop it"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(runlock.InfoPath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("info file left after Release: %v", err)
	}
	if _, err := os.Stat(runlock.Path(root)); err != nil {
		t.Errorf("lock file removed: %v", err)
	}
	l2, err := runlock.Acquire(root, runlock.Holder{})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// A dead holder's info file is overwritten: the OS lock died with it, so
// the file proves nothing.
func TestStaleInfoIsOverwritten(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+"/.baton", 0o755); err != nil {
		t.Fatal(err)
	}
	stale := `{"pid": 999999, "host": "gone", "command": "baton run", "session": "dead"}`
	if err := os.WriteFile(runlock.InfoPath(root), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := runlock.Acquire(root, runlock.Holder{Command: "baton resume"})
	if err != nil {
		t.Fatalf("Acquire over a stale info file: %v", err)
	}
	defer l.Release()
	var h runlock.Holder
	data, _ := os.ReadFile(runlock.InfoPath(root))
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	if h.PID != os.Getpid() || h.Session == "dead" || h.Command != "baton resume" || h.Started.IsZero() {
		t.Errorf("info file = %+v, want this process", h)
	}
}

// A holder that has not written its info file yet is reported without a
// made-up identity.
func TestUnknownHolder(t *testing.T) {
	err := error(&runlock.HeldError{Path: "/w/.baton/run.lock"})
	if !errors.Is(err, runlock.ErrHeld) || !strings.Contains(err.Error(), "has not said who it is") {
		t.Errorf("error = %v", err)
	}
}

// Check answers without taking the lock or writing: nil on a workspace no
// run has used and on a released one, the holder on a held one.
func TestCheckNamesTheHolderAndTakesNothing(t *testing.T) {
	root := t.TempDir()
	if err := runlock.Check(root); err != nil {
		t.Fatalf("Check on a fresh workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".baton")); err == nil {
		t.Error("Check created .baton")
	}
	l, err := runlock.Acquire(root, runlock.Holder{Command: "baton run"})
	if err != nil {
		t.Fatal(err)
	}
	var held *runlock.HeldError
	if err := runlock.Check(root); !errors.As(err, &held) || held.Holder.PID != os.Getpid() {
		t.Errorf("Check on a held workspace = %v; want a HeldError naming pid %d", err, os.Getpid())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := runlock.Check(root); err != nil {
		t.Errorf("Check after release: %v", err)
	}
	if _, err := os.Stat(runlock.InfoPath(root)); err == nil {
		t.Error("Check wrote the holder's info file")
	}
	l2, err := runlock.Acquire(root, runlock.Holder{})
	if err != nil {
		t.Fatalf("Acquire after Check: %v", err)
	}
	l2.Release()
}
