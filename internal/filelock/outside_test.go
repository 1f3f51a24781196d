package filelock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// useCache points os.UserCacheDir at a fresh folder, for this process and
// the children it starts, so tests never touch the user's own cache.
func useCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir) // Linux and the BSDs
	t.Setenv("HOME", dir)           // darwin: $HOME/Library/Caches
	t.Setenv("LocalAppData", dir)   // Windows
	return dir
}

// Locking leaves nothing beside the file: the workspace's git status shows
// no lock files after a run.
func TestLockLeavesNothingInTheFilesFolder(t *testing.T) {
	cache := useCache(t)
	ws := t.TempDir()
	for _, name := range []string{"state.yaml", "ledger.md"} {
		unlock, err := Lock(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s left in the file's folder", e.Name())
	}
	p, err := Path(filepath.Join(ws, "state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, filepath.Join(cache, "baton", "locks")+string(filepath.Separator)) {
		t.Errorf("lock file %s, want it under the user's cache folder %s", p, cache)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("lock file: %v", err)
	}
}

// The same file reached through a symlinked folder, a relative path or a
// path not yet created has one lock; another file has another.
func TestPathIsOnePerFile(t *testing.T) {
	useCache(t)
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	t.Chdir(base)
	want, err := Path(filepath.Join(real, "state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(link, "state.yaml"), filepath.Join("real", "state.yaml"), filepath.Join("link", ".", "state.yaml")} {
		if got, err := Path(p); err != nil || got != want {
			t.Errorf("Path(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	// A folder that does not exist yet: the part that does exist is resolved.
	a, _ := Path(filepath.Join(link, "new", "state.yaml"))
	b, _ := Path(filepath.Join(real, "new", "state.yaml"))
	if a != b || a == want {
		t.Errorf("missing folder: %q vs %q (and %q)", a, b, want)
	}
}

// Without a cache folder (no HOME, as under some service managers) the
// locks live in a folder of the user's own under the temporary folder.
func TestPathFallsBackToTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("LocalAppData", "")
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp)
	t.Setenv("TEMP", tmp)
	if _, err := os.UserCacheDir(); err == nil {
		t.Skip("this platform finds a cache folder without HOME")
	}
	p, err := Path(filepath.Join(t.TempDir(), "state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, tmp+string(filepath.Separator)) {
		t.Errorf("lock file %s, want it under %s", p, tmp)
	}
	unlock, err := Lock(filepath.Join(t.TempDir(), "state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

const childEnv = "BATON_FILELOCK_TEST_CHILD"

// Processes take turns too: children of this test binary each add to a
// counter file under the lock many times; without the lock, read-modify-
// write rounds would overlap and updates would be lost.
func TestLockAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("run by the parent test")
	}
	useCache(t)
	counter := filepath.Join(t.TempDir(), "counter")
	if err := os.WriteFile(counter, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	const children, rounds = 4, 25
	var cmds []*exec.Cmd
	for range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+counter, "BATON_FILELOCK_ROUNDS="+strconv.Itoa(rounds))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
	done := make(chan error, children)
	for _, c := range cmds {
		go func() { done <- c.Wait() }()
	}
	hang := time.After(2 * time.Minute) // a generous guard, not a timing goal
	for range children {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("child: %v", err)
			}
		case <-hang:
			for _, c := range cmds {
				c.Process.Kill()
			}
			t.Fatal("children did not finish: a lock was never released")
		}
	}
	data, _ := os.ReadFile(counter)
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(children*rounds) {
		t.Errorf("counter = %s, want %d: processes overlapped", got, children*rounds)
	}
}

// TestLockChild is one child of TestLockAcrossProcesses.
func TestLockChild(t *testing.T) {
	counter := os.Getenv(childEnv)
	if counter == "" {
		t.Skip("started only by TestLockAcrossProcesses")
	}
	rounds, _ := strconv.Atoi(os.Getenv("BATON_FILELOCK_ROUNDS"))
	for range rounds {
		unlock, err := Lock(counter)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(counter)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(time.Millisecond) // room for another process to get in, were the lock not held
		if err := os.WriteFile(counter, []byte(fmt.Sprint(n+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
	}
}
