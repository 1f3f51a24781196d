//go:build unix

package mcpserver_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/baton-dev/baton/mcpserver"
)

// A baton.yaml that is a FIFO is not opened (the call would wait for a
// writer forever): it declares nothing, and the default ledger is
// written.
func TestWorkflowFIFODeclaresNothing(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "baton.yaml"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	var app mcpserver.LedgerAppendOut
	if res := call(t, cs, "ledger_append", fullEntry(), &app); res.IsError || app.Ledger != "specs/ledger.md" {
		t.Errorf("beside a FIFO baton.yaml: %s %+v", resultText(res), app)
	}
	wantError(t, cs, "ledger_append", pathArgs["ledger_append"][0]("notes.md"), "baton.yaml is not a regular file")
}
