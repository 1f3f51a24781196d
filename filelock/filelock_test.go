package filelock

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Goroutines holding the lock in turn never overlap: the counter of holders
// never exceeds one, which an unlocked section would break at once.
func TestLockGivesTurns(t *testing.T) {
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
