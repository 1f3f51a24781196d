//go:build unix

package hostgov

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A baton.yaml that is a FIFO is not opened (the hook would wait for a
// writer until the host gave up): the default ledger takes the entry.
func TestHookBesideAWorkflowFIFO(t *testing.T) {
	project := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(project, "baton.yaml"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	handle(t, EventPreCompact, payload(EventPreCompact, "f1", workSession(t, project), map[string]any{"trigger": "auto"}), project, opts())
	if _, err := os.Stat(filepath.Join(project, "specs", "ledger.md")); err != nil {
		t.Errorf("the default ledger: %v", err)
	}
}
