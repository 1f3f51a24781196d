package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is written by the server's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// --skills reaches the server: a folder's skill is served as a prompt, and
// a folder that is not there refuses to start in one line.
func TestMCPSkillsFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "memo"), 0o755); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: memo-writer\ndescription: Write a one-page memo.\n---\n\nYou write memos.\n"
	if err := os.WriteFile(filepath.Join(dir, "memo", "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"memo-writer","arguments":{"task":"the Q3 plan"}}}`,
	}, "\n") + "\n"
	// Standard input stays open until the answer is in: at its end the
	// server stops, answered or not.
	pr, pw := io.Pipe()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	root := t.TempDir()
	go func() {
		done <- run(context.Background(), []string{"mcp", "--root", root, "--skills", dir}, pr, &out, &errOut)
	}()
	io.WriteString(pw, in)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	pw.Close()
	if code := <-done; code != 0 || !strings.Contains(out.String(), `You write memos.\n\nTask: the Q3 plan`) {
		t.Errorf("exit %d, stdout %s, stderr %s", code, out.String(), errOut.String())
	}

	missing := filepath.Join(dir, "missing")
	code, _, stderr := runBaton(t, "", "mcp", "--root", t.TempDir(), "--skills", missing)
	if code != exitError || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, missing) {
		t.Errorf("missing --skills folder: exit %d, stderr %q", code, stderr)
	}
}
