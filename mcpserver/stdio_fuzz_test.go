package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// FuzzLineFilter: whatever a client sends, every line that is not blank is
// either answered with a JSON-RPC error of its own or passed on, and the
// SDK's own stdio connection reads everything passed on without an error,
// so that no input can end the session.
func FuzzLineFilter(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x1","method":"tools/list",,}`,
		`{"hello":"world"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}  \r\n\n[]\n5\n",
		`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n"}]`,
		"[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]\n[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`,
		"\ufeff{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		pr, pw := io.Pipe()
		var out bytes.Buffer
		filter := &lineFilter{in: bufio.NewReaderSize(bytes.NewReader(input), 16), sdk: pw, out: &out}
		passed := make(chan []byte)
		go func() {
			data, _ := io.ReadAll(pr)
			passed <- data
		}()
		filter.run()
		forwarded := <-passed

		nonBlank := 0
		for _, line := range bytes.Split(input, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				nonBlank++
			}
		}
		answers := bytes.Count(out.Bytes(), []byte("\n"))
		if got := bytes.Count(forwarded, []byte("\n")) + answers; got != nonBlank {
			t.Fatalf("%d lines that are not blank, %d passed on and answered", nonBlank, got)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct{ Code int }
			}
			if err := json.Unmarshal(line, &r); err != nil || r.JSONRPC != "2.0" || len(r.ID) == 0 || (r.Error.Code != -32700 && r.Error.Code != -32600) {
				t.Fatalf("answer %q is not a JSON-RPC error", line)
			}
		}

		conn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(forwarded)), Writer: discard{}}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for {
			_, err := conn.Read(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("the SDK fails on what was passed on (%q): %v", forwarded, err)
			}
		}
	})
}
