package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/bounded"
)

// A model can write the ledger: one grown far past any real ledger is
// refused with one line by every reader and by Append, which leaves it as it
// was, and reading it does not take its size in memory.
func TestOversizedLedgerIsRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 64 MiB of NULs that take no disk.
	if err := f.Truncate(4 * MaxSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var rerr error
	_, alloc := bounded.Measure(t, time.Minute, func() { _, _, rerr = Read(p) })
	if !errors.Is(rerr, ErrTooLarge) || strings.Contains(rerr.Error(), "\n") {
		t.Errorf("Read = %v, want one line wrapping ErrTooLarge", rerr)
	}
	if alloc > MaxSize {
		t.Errorf("Read allocated %d bytes for a %d-byte ledger; want at most %d", alloc, 4*MaxSize, MaxSize)
	}
	if _, err := Latest(p); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Latest = %v, want ErrTooLarge", err)
	}
	if err := Append(p, fullEntry()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Append = %v, want ErrTooLarge", err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != 4*MaxSize {
		t.Errorf("the ledger changed: %v, %v", fi, err)
	}
}

// An entry that would take a ledger past the bound is not written: the
// ledger could not be read back.
func TestAppendStopsAtTheBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.md")
	old := strings.Repeat("x", MaxSize-10) + "\n"
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(p); err != nil {
		t.Fatalf("a ledger under the bound: %v", err)
	}
	if err := Append(p, fullEntry()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Append = %v, want ErrTooLarge", err)
	}
	if b, _ := os.ReadFile(p); string(b) != old {
		t.Error("the ledger changed")
	}
}
