//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// listedTool is what the test reads of a tools/list entry.
type listedTool struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// baton mcp as a host starts it: a subprocess speaking JSON-RPC on its
// standard input and output. A plain client (no SDK) gets initialize and
// tools/list answered, with every tool's schemas, and stdout carries nothing
// but protocol lines. The time to the tools/list answer is logged; the bound
// is only a hang guard.
func TestMCPOverStdio(t *testing.T) {
	bin := buildBaton(t)
	cmd := exec.Command(bin, "mcp", "--root", t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		io.WriteString(stdin, line+"\n")
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var tools []listedTool
	for tools == nil {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output before answering tools/list")
			}
			var msg struct {
				ID     int `json:"id"`
				Result struct {
					Tools []listedTool `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("stdout carried a line that is not JSON-RPC: %q", line)
			}
			if msg.ID == 2 {
				tools = append([]listedTool{}, msg.Result.Tools...)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no tools/list answer in 30 s")
		}
	}
	t.Logf("initialize and tools/list answered %s after the process started", time.Since(start).Round(time.Millisecond))
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("tool %s lacks a schema", tl.Name)
		}
	}
	for _, want := range mcpContractTools {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %s", want, strings.Join(names, " "))
		}
	}
}
