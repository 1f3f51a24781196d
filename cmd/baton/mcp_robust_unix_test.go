//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/mcpserver"
)

// stdioServer is `baton mcp` as a host starts it, with a raw client.
type stdioServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr chan string
}

func startStdioServer(t *testing.T, bin, root string, env []string) *stdioServer {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "--root", root)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &stdioServer{cmd: cmd, stdin: stdin, lines: make(chan string, 16), stderr: make(chan string, 16)}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	for r, ch := range map[io.Reader]chan string{stdout: s.lines, stderr: s.stderr} {
		go func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				ch <- sc.Text()
			}
			close(ch)
		}()
	}
	return s
}

func (s *stdioServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("baton mcp stopped reading: %v", err)
	}
}

// next is the next line from ch; the bound is only a hang guard.
func next(t *testing.T, ch chan string, what string) string {
	t.Helper()
	select {
	case line, ok := <-ch:
		if !ok {
			t.Fatalf("baton mcp closed its %s", what)
		}
		return line
	case <-time.After(60 * time.Second):
		t.Fatalf("nothing on baton mcp's %s in 60 s", what)
	}
	return ""
}

// reply is what the test reads of one answer on stdout.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent json.RawMessage `json:"structuredContent"`
		Tools             []listedTool    `json:"tools"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func (s *stdioServer) reply(t *testing.T) reply {
	t.Helper()
	line := next(t, s.lines, "standard output")
	var r reply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("stdout carried a line that is not JSON-RPC: %q", line)
	}
	return r
}

// baton mcp as a real process behind a pipe: a malformed line is answered
// with its JSON-RPC error and the server goes on (a valid tools/list after
// it is answered); with no provider in its environment it says so on
// stderr at start, ask is an error that says what to set, and dry_run:
// true is the dry run. With a key, the start line names the provider and
// the model, never the key.
func TestMCPStdioRobustAndLoudWithoutProvider(t *testing.T) {
	bin := buildBaton(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "doc.md"), []byte("# Plans\n\nThe Team plan costs 12 EUR.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s := startStdioServer(t, bin, root, noProviderEnv(t.TempDir(), os.Getenv("PATH")))
	if line := next(t, s.stderr, "standard error"); !strings.HasPrefix(line, "baton: mcp: no model provider found") || !strings.Contains(line, "dry_run: true") {
		t.Errorf("start line %q: want that no provider was found and what to do", line)
	}
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`)
	if r := s.reply(t); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		code int
	}{
		{`{"jsonrpc":"2.0","id":"x1","method":"tools/list",,}`, -32700},
		{`{"hello":"world"}`, -32600},
	} {
		s.send(t, c.line)
		if r := s.reply(t); r.Error == nil || r.Error.Code != c.code || string(r.ID) != "null" {
			t.Errorf("%s: answered id %s, error %+v; want %d with id null", c.line, r.ID, r.Error, c.code)
		}
	}
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := s.reply(t); string(r.ID) != "2" || len(r.Result.Tools) != len(mcpContractTools) {
		t.Fatalf("tools/list after the malformed lines: id %s, %d tools", r.ID, len(r.Result.Tools))
	}

	s.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"task":"What does the Team plan cost?","documents":["doc.md"]}}}`)
	if r := s.reply(t); !r.Result.IsError || len(r.Result.Content) != 1 || r.Result.Content[0].Text != mcpserver.NoProviderMessage {
		t.Errorf("ask without a provider: isError %v, content %+v; want the error %q", r.Result.IsError, r.Result.Content, mcpserver.NoProviderMessage)
	}
	s.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{"task":"What does the Team plan cost?","documents":["doc.md"],"dry_run":true}}}`)
	r := s.reply(t)
	var out mcpserver.AskOut
	if err := json.Unmarshal(r.Result.StructuredContent, &out); err != nil || r.Result.IsError || !out.DryRun || out.RunID == "" {
		t.Errorf("ask with dry_run: isError %v, dry run %v, run %q (%v)", r.Result.IsError, out.DryRun, out.RunID, err)
	}
	s.stdin.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("baton mcp after its input closed: %v", err)
	}

	const key = "sk-ant-start-line-secret-77"
	env := append(noProviderEnv(t.TempDir(), os.Getenv("PATH")), "ANTHROPIC_API_KEY="+key, "ANTHROPIC_BASE_URL=http://127.0.0.1:1")
	s = startStdioServer(t, bin, root, env)
	line := next(t, s.stderr, "standard error")
	if !strings.HasPrefix(line, "baton: mcp: ask calls anthropic model "+"claude-sonnet-4-5") || strings.Contains(line, key) {
		t.Errorf("start line %q: want the provider and the model, and never the key", line)
	}
}
