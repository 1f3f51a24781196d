package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/mcpserver"
)

// A POST whose body is not JSON-RPC gets the JSON-RPC error in the body,
// in a session or outside one, and the server and the session go on
// serving.
func TestHTTPAnswersAMalformedBodyAndGoesOn(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{})
	ctx := context.Background()
	cs, err := connectHTTP(ctx, hs.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cases := []struct {
		name, body string
		status     int
		code       int
		id         string
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":"x1","method":"tools/list",,}`, http.StatusBadRequest, -32700, "null"},
		{"not JSON-RPC", `{"hello":"world"}`, http.StatusBadRequest, -32600, "null"},
		{"no version, an id", `{"id":"x1","method":"tools/list"}`, http.StatusBadRequest, -32600, `"x1"`},
		{"over the bound", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcpserver.MaxHTTPBodyBytes) + `"}}`, http.StatusRequestEntityTooLarge, -32600, "null"},
	}
	for _, session := range []string{cs.ID(), ""} {
		for _, c := range cases {
			req, err := http.NewRequest(http.MethodPost, hs.url, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var r rpcReply
			if err := json.Unmarshal(data, &r); err != nil || r.Error == nil {
				t.Errorf("%s (session %q): status %d, body %q: want a JSON-RPC error", c.name, session, res.StatusCode, data)
				continue
			}
			if res.StatusCode != c.status || r.Error.Code != c.code || string(r.ID) != c.id {
				t.Errorf("%s (session %q): status %d, id %s, error %+v; want %d, code %d, id %s", c.name, session, res.StatusCode, r.ID, r.Error, c.status, c.code, c.id)
			}
		}
		// The session is still served.
		if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) == 0 {
			t.Fatalf("tools/list after the malformed bodies: %v", err)
		}
	}
}
