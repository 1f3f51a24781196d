package document

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadBounded runs Load and fails the test as soon as it allocates more than
// maxAlloc bytes or runs for more than 10 s, instead of letting an unbounded
// read take the machine down. It returns the bytes allocated meanwhile and
// Load's error.
func loadBounded(t *testing.T, maxAlloc uint64, args []string, stdin io.Reader) (uint64, error) {
	t.Helper()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() {
		_, err := Load(args, stdin)
		done <- err
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-done:
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("Load(%v): %d KB allocated", args, (after.TotalAlloc-before.TotalAlloc)>>10)
			return after.TotalAlloc - before.TotalAlloc, err
		case <-deadline:
			t.Fatalf("Load(%v) still running after 10 s", args)
		case <-tick.C:
			var now runtime.MemStats
			runtime.ReadMemStats(&now)
			if d := now.TotalAlloc - before.TotalAlloc; d > maxAlloc {
				t.Fatalf("Load(%v) allocated %d MB and is still reading", args, d>>20)
			}
		}
	}
}

func checkOneLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want one containing %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is more than one line: %q", err)
	}
}

func TestDeviceIsRefusedWithoutReading(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	alloc, err := loadBounded(t, 200<<20, []string{"/dev/zero"}, nil)
	checkOneLine(t, err, "document /dev/zero: not a regular file (a device); baton reads files, folders and - for standard input")
	if alloc > 1<<20 {
		t.Errorf("refusing /dev/zero allocated %d bytes", alloc)
	}
}

func TestOversizedFileIsRefusedBeforeReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 200 MB by size, no blocks on disk.
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	alloc, err := loadBounded(t, 200<<20, []string{p}, nil)
	checkOneLine(t, err, "huge.md is 200 MiB, over the 64 MiB limit")
	if alloc > 1<<20 {
		t.Errorf("refusing a 200 MB file allocated %d bytes; it was read", alloc)
	}

	// Two files each under the limit but over it together: the second is
	// refused by its size, not read.
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Text where the binary check looks, sparse beyond.
		if _, err := f.WriteString(strings.Repeat("text\n", 2000)); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(40 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	alloc, err = loadBounded(t, 200<<20, []string{filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md")}, nil)
	checkOneLine(t, err, "documents exceed 64 MiB in total")
	if alloc > 60<<20 {
		t.Errorf("two 40 MB files allocated %d MB; the second was read", alloc>>20)
	}
}

// endless yields 'a' forever, like a producer that never stops.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	// copy, not a loop over bytes: the race detector would check each
	// byte and make the producer, not Load, the slow part.
	for n := 0; n < len(p); {
		n += copy(p[n:], letters)
	}
	return len(p), nil
}

var letters = bytes.Repeat([]byte("a"), 64<<10)

func TestStdinOverTheLimitEndsWithOneLine(t *testing.T) {
	alloc, err := loadBounded(t, 200<<20, []string{"-"}, endless{})
	checkOneLine(t, err, "standard input exceeds 64 MiB")
	if alloc > 150<<20 {
		t.Errorf("reading 64 MiB of standard input allocated %d MB", alloc>>20)
	}
}

func TestStdinPathIsReadOnlyWhenARegularFile(t *testing.T) {
	// /dev/stdin names whatever standard input is: a pipe or a terminal is
	// refused like any other non-regular file (use - for those), a redirect
	// from a file is that file.
	if info, err := os.Stat("/dev/stdin"); err == nil {
		_, err := loadBounded(t, 200<<20, []string{"/dev/stdin"}, nil)
		if info.Mode().IsRegular() {
			if err != nil {
				t.Fatalf("Load(/dev/stdin redirected from a file) = %v", err)
			}
		} else {
			checkOneLine(t, err, "document /dev/stdin: not a regular file")
		}
	}
	// The redirect case, through the same kind of path: a descriptor that
	// refers to a regular file.
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	p := filepath.Join(t.TempDir(), "in.md")
	write(t, p, "# From a redirect\n")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Load([]string{"/proc/self/fd/" + strconv.Itoa(int(f.Fd()))}, nil)
	if err != nil || c.Text != "# From a redirect\n" {
		t.Fatalf("Load(a descriptor of a regular file) = %+v, %v", c, err)
	}
}
