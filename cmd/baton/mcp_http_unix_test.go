//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// servingLine is the one line `baton mcp --http` writes once it listens.
var servingLine = regexp.MustCompile(`^baton: mcp: serving (http://127\.0\.0\.1:[1-9][0-9]*/mcp)$`)

// rpcClient is a plain Streamable HTTP client: JSON-RPC in POSTs, answers
// read as JSON or as an event stream, the session id carried from the
// initialize answer.
type rpcClient struct {
	url, token, session string
}

// send posts one message and returns the status and, for a request, the
// JSON-RPC answer whose id is id.
func (c *rpcClient) send(t *testing.T, id int, method string, params any) (int, map[string]json.RawMessage) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer res.Body.Close()
	if sid := res.Header.Get("Mcp-Session-Id"); sid != "" {
		c.session = sid
	}
	if id == 0 || res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	var payloads [][]byte
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				payloads = append(payloads, []byte(data))
			}
		}
	} else {
		data, _ := io.ReadAll(res.Body)
		payloads = append(payloads, data)
	}
	for _, p := range payloads {
		var answer map[string]json.RawMessage
		if json.Unmarshal(p, &answer) == nil && string(answer["id"]) == fmt.Sprint(id) {
			if e, ok := answer["error"]; ok {
				t.Fatalf("%s: JSON-RPC error %s", method, e)
			}
			return res.StatusCode, answer
		}
	}
	t.Fatalf("%s: no answer with id %d in %q", method, id, payloads)
	return 0, nil
}

// startHTTP starts `baton mcp --http 127.0.0.1:0` with args and the token
// in its environment, and returns the URL from its serving line, the
// stderr line after the provider's.
func startHTTP(t *testing.T, bin, token string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, tokenEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, tokenEnv+"="+token)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		for i := 0; i < 2 && sc.Scan(); i++ {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stderr)
	}()
	// The provider's line, then the serving line.
	for i := 0; ; i++ {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("baton mcp --http ended its standard error before the serving line")
			}
			if i == 0 {
				if !strings.HasPrefix(line, "baton: mcp: ") || servingLine.MatchString(line) {
					t.Fatalf("first stderr line %q: want the provider's line", line)
				}
				continue
			}
			m := servingLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("stderr line %q: want %s", line, servingLine)
			}
			return cmd, m[1]
		case <-time.After(60 * time.Second):
			t.Fatal("no serving line on stderr in 60 s")
		}
	}
}

// baton mcp --http as a host reaches it: a stderr line names the real
// port; a plain client does the Streamable HTTP handshake (initialize, the
// session id, initialized) and lists the tools, with the token from
// BATON_MCP_TOKEN (a request without it gets 401); a slice over the
// --max-result bound is written under .baton/mcp instead of returned; and
// SIGINT stops the server.
func TestMCPOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	bin := buildBaton(t)
	root := t.TempDir()
	doc := "# Vendors\n\n## Acme\n\n" + strings.Repeat("Acme charges 10 EUR a seat, billed monthly, with a discount for a year paid up front.\n", 60)
	if err := os.WriteFile(filepath.Join(root, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, url := startHTTP(t, bin, "tok-4242", "--root", root, "--max-result", "8192")

	if code, _ := (&rpcClient{url: url}).send(t, 1, "initialize", map[string]any{}); code != http.StatusUnauthorized {
		t.Errorf("initialize without the token: status %d, want 401", code)
	}
	c := &rpcClient{url: url, token: "tok-4242"}
	c.send(t, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "plain", "version": "1"}})
	if c.session == "" {
		t.Fatal("initialize answered without an Mcp-Session-Id")
	}
	if code, _ := c.send(t, 0, "notifications/initialized", nil); code != http.StatusAccepted {
		t.Errorf("notifications/initialized: status %d, want 202", code)
	}
	_, answer := c.send(t, 2, "tools/list", nil)
	var list struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(answer["result"], &list); err != nil {
		t.Fatalf("tools/list result %s: %v", answer["result"], err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("tool %s lacks a schema", tl.Name)
		}
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "slice") || !strings.Contains(got, "count_tokens") {
		t.Errorf("tools over http: %s", got)
	}

	_, answer = c.send(t, 3, "tools/call", map[string]any{"name": "slice", "arguments": map[string]any{"document": "doc.md", "sections": []string{"Acme"}}})
	var called struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Text    string `json:"text"`
			Spilled *struct {
				Path  string `json:"path"`
				Bytes int    `json:"bytes"`
			} `json:"spilled"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(answer["result"], &called); err != nil {
		t.Fatalf("tools/call result %s: %v", answer["result"], err)
	}
	sc := called.StructuredContent
	if called.IsError || sc.Spilled == nil || sc.Text != "" {
		t.Fatalf("a slice over --max-result 8192 was not spilled: %s", answer["result"])
	}
	got, err := os.ReadFile(filepath.Join(root, sc.Spilled.Path))
	if err != nil || !strings.Contains(string(got), "10 EUR a seat") || len(got) != sc.Spilled.Bytes || len(got) <= 4096 {
		t.Errorf("spilled file %s: %q (err %v), %d bytes said", sc.Spilled.Path, got, err, sc.Spilled.Bytes)
	}

	proc.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- proc.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("baton mcp --http did not stop within 60 s of SIGINT")
	}
}
