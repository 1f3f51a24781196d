package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-dev/baton/mcpserver"
)

// A documents list over MaxDocuments is refused before the server decodes
// the call's arguments. Measured as bytes allocated in the process across
// the call of a 200,000-entry list (an 800 KB line): the SDK's reading of
// the JSON-RPC line takes some 20 times the line whatever it holds, and
// decoding the list into values (twice: for the schema check, then into
// the tool's input) some 60 times more, which the bound spares.
func TestDocumentsListIsRefusedUndecoded(t *testing.T) {
	ss := startStdio(t)
	ss.send(t, initLine)
	if r := ss.next(t); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	ss.send(t, initializedLine)
	for _, tool := range []string{"ask", "outline", "count_tokens"} {
		key, rest := "documents", ""
		switch tool {
		case "ask":
			rest = `"task":"t","dry_run":true,`
		case "count_tokens":
			key = "files"
		}
		line := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{` + rest + `"` + key + `":[` +
			strings.TrimSuffix(strings.Repeat(`".",`, 200_000), ",") + `]}}}`
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ss.send(t, line)
		r := ss.next(t)
		runtime.ReadMemStats(&after)
		if r.Error != nil || !strings.Contains(string(r.Result), "200000") || !strings.Contains(string(r.Result), fmt.Sprintf("over the limit of %d documents per call", mcpserver.MaxDocuments)) {
			t.Errorf("%s: %s %+v: want the list refused", tool, r.Result, r.Error)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 40*uint64(len(line)) {
			t.Errorf("%s: %d bytes allocated for a %d-byte line, over 40 times it", tool, got, len(line))
		}
	}
}

// The count agrees with decoding, whatever the strings hold.
func TestListLen(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{`[]`, 0},
		{`[ ]`, 0},
		{`["a"]`, 1},
		{`["a,b", "c]", "d\"]", "e\\"]`, 4},
		{`[["x", "y"], {"k": [1, 2]}, 3]`, 3},
		{"[\n\"a\" ,\t\"b\"\n]", 2},
		{`null`, 0},
		{`"a,b"`, 0},
	} {
		if got := mcpserver.ListLen([]byte(c.in)); got != c.want {
			t.Errorf("%s: %d, want %d", c.in, got, c.want)
		}
	}
}

func FuzzListLen(f *testing.F) {
	for _, s := range []string{`[]`, `["a", "b"]`, `["a\"", [1, {"x": "]"}]]`, `[1,2,3]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v []any
		if json.Unmarshal([]byte(s), &v) != nil || !strings.HasPrefix(s, "[") {
			return
		}
		if got := mcpserver.ListLen([]byte(s)); got != len(v) {
			t.Errorf("%q: %d, want %d", s, got, len(v))
		}
	})
}
