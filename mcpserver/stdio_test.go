package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/mcpserver"
)

// stdioSession is a server on RunStdio with a raw client: lines in, lines
// out.
type stdioSession struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startStdio(t *testing.T) *stdioSession {
	t.Helper()
	s, err := mcpserver.New(mcpserver.Config{Root: t.TempDir(), Version: "test", Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &stdioSession{in: inW, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		ss.done <- s.RunStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			ss.lines <- sc.Text()
		}
		close(ss.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return ss
}

func (ss *stdioSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(ss.in, line+"\n"); err != nil {
		t.Fatalf("the server stopped reading: %v", err)
	}
}

// rpcReply is what a test reads of one answer.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next is the next answer; the time bound is only a hang guard.
func (ss *stdioSession) next(t *testing.T) rpcReply {
	t.Helper()
	select {
	case line, ok := <-ss.lines:
		if !ok {
			t.Fatalf("the server closed its output (RunStdio: %v)", <-ss.done)
		}
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a line that is not JSON-RPC: %q", line)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no answer in 30 s")
	}
	return rpcReply{}
}

const (
	initLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// A line the SDK cannot read is answered with its JSON-RPC error, and the
// session goes on: the next request is answered too.
func TestStdioAnswersAMalformedLineAndGoesOn(t *testing.T) {
	cases := []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":"x1","method":"tools/list",,}`, -32700, "null"},
		{"not JSON-RPC", `{"hello":"world"}`, -32600, "null"},
		{"no version, an id", `{"id":"x1","method":"tools/list"}`, -32600, `"x1"`},
		{"a number id", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"an object id", `{"id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"two values", `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, -32700, "null"},
		{"a bare number", `5`, -32600, "null"},
		{"an empty batch", `[]`, -32600, "null"},
		{"a batch on a protocol without batches", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, "null"},
		{"a byte order mark", "\ufeff{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}", -32700, "null"},
	}
	ss := startStdio(t)
	ss.send(t, initLine)
	if r := ss.next(t); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	ss.send(t, initializedLine)
	for i, c := range cases {
		ss.send(t, c.line)
		r := ss.next(t)
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%s: answer id %s, error %+v; want code %d with id %s", c.name, r.ID, r.Error, c.code, c.id)
		}
		// Still serving: a valid request right after is answered.
		ss.send(t, `{"jsonrpc":"2.0","id":`+jsonInt(100+i)+`,"method":"tools/list"}`+"  \r")
		if r := ss.next(t); r.Error != nil || string(r.ID) != jsonInt(100+i) || !strings.Contains(string(r.Result), `"count_tokens"`) {
			t.Fatalf("after %s: tools/list answered id %s, error %+v", c.name, r.ID, r.Error)
		}
	}
}

// A line over the bound is refused and skipped to its newline, and the
// session goes on.
func TestStdioSkipsALineOverTheBound(t *testing.T) {
	ss := startStdio(t)
	ss.send(t, initLine)
	ss.next(t)
	ss.send(t, initializedLine)
	long := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcpserver.MaxMessageBytes) + `"}}`
	ss.send(t, long)
	if r := ss.next(t); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "16 MiB") {
		t.Errorf("a line of %d bytes: answer id %s, error %+v", len(long), r.ID, r.Error)
	}
	ss.send(t, `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if r := ss.next(t); r.Error != nil || string(r.ID) != "10" {
		t.Errorf("ping after the long line: id %s, error %+v", r.ID, r.Error)
	}
}

// Batches keep working where the protocol has them (before 2025-06-18),
// and one that the SDK would end the session at is refused instead.
func TestStdioBatchesOnAnOlderProtocol(t *testing.T) {
	ss := startStdio(t)
	ss.send(t, strings.Replace(initLine, "2025-06-18", "2025-03-26", 1))
	ss.next(t)
	ss.send(t, initializedLine)
	ss.send(t, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	select {
	case line := <-ss.lines:
		var batch []rpcReply
		if err := json.Unmarshal([]byte(line), &batch); err != nil || len(batch) != 2 {
			t.Fatalf("the batch's answer %q: want an array of two", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the batch in 30 s")
	}
	for _, bad := range []string{
		`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"hello":"world"}]`,
	} {
		ss.send(t, bad)
		if r := ss.next(t); r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("batch %s: answer %+v, want -32600", bad, r)
		}
	}
	ss.send(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if r := ss.next(t); r.Error != nil || string(r.ID) != "6" {
		t.Errorf("ping after the refused batches: id %s, error %+v", r.ID, r.Error)
	}
}

func jsonInt(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
