package state

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
		line string // expected "line N" in the message, if any
	}{
		{"tab indentation", "a:\n\tb: 1\n", ErrMalformed, "line 2"},
		{"unclosed double quote", "a: \"open\nb: 1\n", ErrMalformed, "line 1"},
		{"unclosed single quote", "a: 'open\n", ErrMalformed, "line 1"},
		{"duplicate key", "a: 1\nb: 2\na: 3\n", ErrMalformed, "line 3"},
		{"duplicate nested key", "h:\n  k: 1\n  k: 2\n", ErrMalformed, "line 3"},
		{"list at top level", "- a\n- b\n", ErrNotMapping, ""},
		{"scalar at top level", "just text\n", ErrNotMapping, ""},
		{"two documents", "a: 1\n---\nb: 2\n", ErrMalformed, ""},
		{"lone carriage return", "a: 1\rb: 2\n", ErrMalformed, "line 1"},
		{"invalid UTF-8", "a: \xff\n", ErrMalformed, ""},
		{"NUL byte", "a: \x00\n", ErrMalformed, ""},
		{"too large", "a: " + strings.Repeat("x", MaxSize) + "\n", ErrMalformed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), "specs/state.yaml")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is more than one line: %q", msg)
			}
			if !strings.HasPrefix(msg, "state specs/state.yaml: ") {
				t.Errorf("error does not name the file: %q", msg)
			}
			if tt.line != "" && !strings.Contains(msg, tt.line) {
				t.Errorf("error %q does not say %q", msg, tt.line)
			}
		})
	}
}

// TestMalformedFileUntouched: neither Load nor Update may write over a file
// they cannot read.
func TestMalformedFileUntouched(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yaml")
	bad := "handoff:\n  next_skill: a\n  next_skill: b\n"
	if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Load err = %v", err)
	}
	called := false
	err := Update(p, func(f *File) error { called = true; return f.Set("x", "handoff", "next_skill") })
	if !errors.Is(err, ErrMalformed) || called {
		t.Fatalf("Update err = %v, fn called = %v", err, called)
	}
	if got, _ := os.ReadFile(p); string(got) != bad {
		t.Errorf("file changed to %q", got)
	}
}

func TestLoadMissingThenSave(t *testing.T) {
	p := filepath.Join(t.TempDir(), "specs", "state.yaml")
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Bytes()) != 0 || f.Handoff().NextSkill != "" {
		t.Fatalf("missing file should load empty, got %q", f.Bytes())
	}
	if err := f.SetHandoff(HandoffUpdate{NextSkill: ptr("scope")}); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", st.Mode().Perm())
	}
	g, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Handoff().NextSkill; got != "scope" {
		t.Errorf("next_skill = %q", got)
	}
}

func TestSaveKeepsModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.yaml")
	link := filepath.Join(dir, "state.yaml")
	if err := os.WriteFile(target, []byte("mine: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := Update(link, func(f *File) error { return f.Set("x", "handoff", "next_skill") }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	st, _ := os.Stat(target)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	if got, _ := os.ReadFile(target); string(got) != "mine: 1\nhandoff:\n  next_skill: x\n" {
		t.Errorf("target = %q", got)
	}
}

func TestSaveWithoutPath(t *testing.T) {
	f, err := Parse([]byte("a: 1\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); !errors.Is(err, ErrNoPath) {
		t.Errorf("err = %v, want ErrNoPath", err)
	}
}

func TestUpdateErrorsAndNoOps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yaml")
	orig := "a: 1 # keep\n"
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)

	boom := errors.New("boom")
	err := Update(p, func(f *File) error {
		if err := f.Set(2, "a"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if err := Update(p, func(f *File) error { return f.Set(1, "a") }); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("the file was rewritten although nothing changed")
	}
	if got, _ := os.ReadFile(p); string(got) != orig {
		t.Errorf("file = %q", got)
	}
}

// bump is one writer's turn: read the counter, add one, record a step.
func bump(f *File) error {
	n, _ := f.Get("counter")
	if err := f.Set(num(n)+1, "counter"); err != nil {
		return err
	}
	return f.RecordStep("epic", "worker", 10*time.Millisecond, Usage{InputTokens: 1})
}

func TestUpdateConcurrentGoroutines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yaml")
	if err := os.WriteFile(p, []byte("# shared\ncounter: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- Update(p, bump) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkCount(t, p, n)
}

// TestUpdateConcurrentProcesses runs writers in separate processes (this
// test binary re-run as a helper) alongside goroutines in this one.
func TestUpdateConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	p := filepath.Join(t.TempDir(), "state.yaml")
	const procs, each = 3, 5
	var wg sync.WaitGroup
	errs := make(chan error, procs+each)
	for range procs {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^TestHelperWriter$")
			cmd.Env = append(os.Environ(), "STATE_HELPER_FILE="+p, "STATE_HELPER_COUNT="+strconv.Itoa(each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("helper: %v: %s", err, out)
			}
		})
	}
	for range each {
		wg.Go(func() {
			if err := Update(p, bump); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkCount(t, p, procs*each+each)
}

// TestHelperWriter is the body of a writer process; it does nothing in a
// normal test run.
func TestHelperWriter(t *testing.T) {
	p := os.Getenv("STATE_HELPER_FILE")
	if p == "" {
		t.Skip("only runs as a helper process")
	}
	n, _ := strconv.Atoi(os.Getenv("STATE_HELPER_COUNT"))
	for range n {
		if err := Update(p, bump); err != nil {
			t.Fatal(err)
		}
	}
}

func checkCount(t *testing.T, p string, n int) {
	t.Helper()
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Get("counter"); num(got) != int64(n) {
		t.Errorf("counter = %v, want %d", got, n)
	}
	if st := f.SkillTiming("worker"); st.Calls != int64(n) || st.InputTokens != int64(n) {
		t.Errorf("timing = %+v, want %d calls", st, n)
	}
	if got := len(f.Cycle("epic").CompletedSteps); got != n {
		t.Errorf("completed steps = %d, want %d", got, n)
	}
}
