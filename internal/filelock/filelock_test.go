package filelock

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Goroutines holding the lock in turn never overlap: the counter of holders
// never exceeds one, which an unlocked section would break at once.
func TestLockGivesTurns(t *testing.T) {
	useCache(t)
	path := filepath.Join(t.TempDir(), "sub", "state.yaml")
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				unlock, err := Lock(path)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				most = max(most, inside)
				mu.Unlock()
				time.Sleep(20 * time.Microsecond) // long enough for another to get in, were the lock not held
				mu.Lock()
				inside--
				mu.Unlock()
				if err := unlock(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d holders at once, want 1", most)
	}
}

// A symlink in the lock file's place is refused: nothing is created where
// it points.
func TestLockRefusesASymlink(t *testing.T) {
	useCache(t)
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "planted")
	lp, err := Path(filepath.Join(dir, "ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, lp); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	if _, err := Lock(filepath.Join(dir, "ledger.md")); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("err = %v, want a symlink refusal", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("a file was created outside through the symlink")
	}
}
