//go:build unix

package document

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestNamedPipeIsRefusedWithoutReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.md")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A writer that writes forever, until the test ends: a reader without
	// a bound would never see the end of it.
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := make([]byte, 64<<10)
		for i := range buf {
			buf[i] = 'x'
		}
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		// Open and close the reading end so a writer still blocked in open
		// gets through and then sees the pipe closed.
		if r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Error("the pipe's writer did not stop")
		}
	})
	alloc, err := loadBounded(t, 200<<20, []string{p}, nil)
	checkOneLine(t, err, "pipe.md: not a regular file (a named pipe); baton reads files, folders and - for standard input")
	if alloc > 1<<20 {
		t.Errorf("refusing a named pipe allocated %d bytes", alloc)
	}
}
