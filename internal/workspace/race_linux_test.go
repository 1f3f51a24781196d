//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// swaps is how many times the racer exchanges the folder and the symlink.
// The reviewer's 1,200 attempts found dozens of escapes in the old
// check-then-open code; 100,000 leave no room for luck.
const swaps = 100_000

// minOps is the fewest reads (and as many writes) the race runs for: on a
// loaded machine the swapper can finish its swaps before the tools had many
// turns, so it keeps going, in pairs, until they have.
const minOps = 5_000

// TestNoEscapeUnderSwapRace: a local process exchanges a real folder with a
// symlink (renameat2 RENAME_EXCHANGE, atomic) while reads and writes go
// through the workspace. Not one read may return the content behind the
// link and not one write may land there, whether the link leads outside the
// workspace or into .git, which is inside it but off limits.
func TestNoEscapeUnderSwapRace(t *testing.T) {
	t.Run("outside", func(t *testing.T) {
		swapRace(t, func(base, root string) (string, string) {
			out := filepath.Join(base, "outside")
			return out, out
		})
	})
	t.Run(".git", func(t *testing.T) {
		swapRace(t, func(base, root string) (string, string) {
			return filepath.Join(root, ".git"), ".git"
		})
	})
}

// swapRace runs the race against a link to the folder forbidden returns
// (created here, holding a marker file f), written as the link target.
func swapRace(t *testing.T, forbidden func(base, root string) (dir, target string)) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	dir := filepath.Join(root, "d")
	other, target := forbidden(base, root)
	for _, d := range []string{dir, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const inside, marker = "inside\n", "FORBIDDEN-MARKER\n"
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(inside), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "f"), []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "l")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE unavailable here: %v", err)
	}
	if err := exchange(); err != nil {
		t.Fatal(err)
	}
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w = writable(t, w)

	start := time.Now()
	done := make(chan error, 1)
	var enough atomic.Bool
	go func() {
		for i := 0; i < swaps || !enough.Load(); i += 2 {
			if err := exchange(); err != nil {
				done <- err
				return
			}
			if err := exchange(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var reads, readsOK, readEscapes, writes, writesOK int
	var swapErr error
loop:
	for i := 0; ; i++ {
		select {
		case swapErr = <-done:
			break loop
		default:
		}
		reads++
		if reads == minOps {
			enough.Store(true)
		}
		if got, err := w.ReadFile("d/f", 0); err == nil {
			readsOK++
			if strings.Contains(got, "FORBIDDEN") {
				readEscapes++
			}
		}
		writes++
		if err := w.WriteFile("d/w"+strconv.Itoa(i), []byte("written\n")); err == nil {
			writesOK++
		}
	}
	elapsed := time.Since(start)
	if swapErr != nil {
		t.Fatal(swapErr)
	}
	entries, err := os.ReadDir(other)
	if err != nil {
		t.Fatal(err)
	}
	writeEscapes := len(entries) - 1 // every entry but f was written through the link
	got, _ := os.ReadFile(filepath.Join(other, "f"))
	t.Logf("at least %d swaps in %v: %d reads (%d succeeded), %d writes (%d succeeded); %d reads and %d writes escaped",
		swaps, elapsed.Round(time.Millisecond), reads, readsOK, writes, writesOK, readEscapes, writeEscapes)
	if readEscapes > 0 || writeEscapes > 0 || string(got) != marker {
		t.Errorf("%d of %d reads returned the forbidden file and %d of %d writes landed beside it", readEscapes, reads, writeEscapes, writes)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("d is not the real folder after an even number of swaps: %v", err)
	}
	// With the folder back in place the tools must work: the race made
	// calls fail, it did not break the workspace.
	if got, err := w.ReadFile("d/f", 0); err != nil || got != inside {
		t.Errorf("ReadFile after the race = %q, %v", got, err)
	}
	if err := w.WriteFile("d/after", []byte("x")); err != nil {
		t.Errorf("WriteFile after the race: %v", err)
	}
}
