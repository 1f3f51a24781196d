package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/tokens"
)

const doc = `# Vendors

## Acme

### Pricing

Acme charges 10 EUR a seat.

## Globex

### Pricing

Globex charges 12 EUR a seat.
`

// connect starts the server on an in-memory transport over a root holding
// doc.md, and returns a client session to it.
func connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectIn(t, t.TempDir())
	return cs
}

func connectIn(t *testing.T, dir string) (*mcp.ClientSession, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil), dir
}

// serve starts a server with cfg on an in-memory transport and returns a
// client session to it; opts are the client's.
func serve(t *testing.T, cfg mcpserver.Config, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	s, err := mcpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.SDK().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, data, err)
		}
	}
	return res
}

// slice cuts each vendor's own Pricing by its unique path, and reports a
// bare title that names both as ambiguous instead of giving the first (with
// nothing matched, the whole document is the fallback, and says so).
func TestSliceByUniquePath(t *testing.T) {
	cs := connect(t)
	var out mcpserver.SliceOut
	call(t, cs, "slice", map[string]any{"document": "doc.md", "sections": []string{"Globex > Pricing"}}, &out)
	if !strings.Contains(out.Text, "12 EUR") || strings.Contains(out.Text, "10 EUR") || out.Fallback {
		t.Errorf("slice of Globex > Pricing: %q (fallback %v)", out.Text, out.Fallback)
	}
	if out.Tokens != tokens.Count(out.Text) || len(out.Matched) != 1 {
		t.Errorf("tokens %d (want %d), matched %v", out.Tokens, tokens.Count(out.Text), out.Matched)
	}
	out = mcpserver.SliceOut{}
	call(t, cs, "slice", map[string]any{"document": "doc.md", "sections": []string{"Pricing"}}, &out)
	if len(out.Misses) != 1 || !out.Misses[0].Ambiguous || len(out.Matched) != 0 || !out.Fallback {
		t.Errorf("bare Pricing: misses %+v, matched %v", out.Misses, out.Matched)
	}
}

// outline gives unique paths with their lines; count_tokens counts as baton
// does and names the encoding and window.
func TestOutlineAndCount(t *testing.T) {
	cs := connect(t)
	var o mcpserver.OutlineOut
	call(t, cs, "outline", map[string]any{"documents": []string{"doc.md"}}, &o)
	if !strings.Contains(o.Text, "Globex > Pricing") || !strings.Contains(o.Text, "Acme > Pricing") {
		t.Errorf("outline text:\n%s", o.Text)
	}
	var c mcpserver.CountOut
	call(t, cs, "count_tokens", map[string]any{"texts": []string{"hello world"}, "files": []string{"doc.md"}, "model": "gpt-4o"}, &c)
	if c.Total != tokens.Count("hello world")+tokens.Count(doc) || c.Encoding != "o200k_base" || c.Window != 128000 || !c.WindowKnown {
		t.Errorf("count: %+v", c)
	}
}

// Bad input is a tool error with one clear line, never a crash: a path
// that leaves the root, a missing file, an impossible line range, nothing
// to count.
func TestBadInputIsAToolError(t *testing.T) {
	cs := connect(t)
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("# Secret\n\ntop secret\n"), 0o644)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"slice", map[string]any{"document": "../secret.md"}, "escapes"},
		{"slice", map[string]any{"document": outside}, "doc"},
		{"outline", map[string]any{"documents": []string{"missing.md"}}, "missing.md"},
		{"count_tokens", map[string]any{"files": []string{"../../etc/passwd"}}, "escapes"},
		{"slice", map[string]any{"document": "doc.md", "line_ranges": [][2]int{{5, 2}}}, "line range"},
		{"count_tokens", map[string]any{}, "nothing to count"},
	} {
		res := call(t, cs, c.tool, c.args, nil)
		text := ""
		if len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, c.want) || strings.Contains(text, "\n") || strings.Contains(text, "top secret") {
			t.Errorf("%s %v: isError %v, text %q; want one line naming %q", c.tool, c.args, res.IsError, text, c.want)
		}
	}
}

// A 5 MB document's whole-document slice and its outline are over the
// result bound: each is written under .baton/mcp, the result holds no text
// but where it went and how large it is, and the file holds exactly what
// would have been returned. A small slice stays inline.
func TestLargeResultsAreSpilled(t *testing.T) {
	t.Parallel() // the longest test here: the tokenizer over 5 MB, twice
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nThe pumps at site %d ran all night and the valves held.\n\n", i+1, i+1)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connectIn(t, dir)
	res := call(t, cs, "slice", map[string]any{"document": "big.md", "line_ranges": [][2]int{{1, 1 << 30}}}, nil)
	var out mcpserver.SliceOut
	data, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(data, &out)
	if wire, _ := json.Marshal(res); out.Spilled == nil || out.Text != "" || len(wire) > mcpserver.DefaultMaxResultBytes {
		t.Fatalf("slice of 5 MB: spilled %+v, %d bytes of text, %d bytes of result", out.Spilled, len(out.Text), len(data))
	}
	got, err := os.ReadFile(filepath.Join(dir, out.Spilled.Path))
	if err != nil || string(got) != b.String() || out.Spilled.Bytes != b.Len() || !strings.HasPrefix(out.Spilled.Path, mcpserver.SpillDir+"/") {
		t.Errorf("spilled file %s: %d bytes (err %v), want the %d-byte slice", out.Spilled.Path, len(got), err, b.Len())
	}
	var o mcpserver.OutlineOut
	res = call(t, cs, "outline", map[string]any{"documents": []string{"big.md"}}, &o)
	data, _ = json.Marshal(res)
	if o.Spilled == nil || o.Text != "" || len(data) > mcpserver.DefaultMaxResultBytes || !strings.Contains(o.Spilled.Note, "budget") {
		t.Errorf("outline of 5 MB: spilled %+v, %d bytes of result", o.Spilled, len(data))
	}
	var small mcpserver.SliceOut
	call(t, cs, "slice", map[string]any{"document": "big.md", "sections": []string{"Part 7"}}, &small)
	if small.Spilled != nil || !strings.Contains(small.Text, "site 7 ran") {
		t.Errorf("a small slice was spilled or lost: %+v", small)
	}
}

// The bound is on the result as sent: structuredContent and its text
// mirror together. A 40 KB slice would fit a bound on its text alone but
// not on the result that carries it twice, so it is spilled; and a result
// whose size is not in one text (counts of 5,000 texts) is saved whole,
// with an error result of one line saying where.
func TestBoundIsOnTheWholeResult(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "Line %d: \"quoted\" and plain words.\n", i+1)
	}
	os.WriteFile(filepath.Join(dir, "mid.md"), []byte(b.String()), 0o644)
	cs, _ := connectIn(t, dir)
	var out mcpserver.SliceOut
	res := call(t, cs, "slice", map[string]any{"document": "mid.md", "line_ranges": [][2]int{{1, 1 << 20}}}, &out)
	wire, _ := json.Marshal(res)
	if res.IsError || out.Spilled == nil || len(wire) > mcpserver.DefaultMaxResultBytes {
		t.Errorf("40 KB slice: isError %v, spilled %+v, %d bytes on the wire (bound %d)", res.IsError, out.Spilled, len(wire), mcpserver.DefaultMaxResultBytes)
	}
	texts := make([]string, 5000)
	for i := range texts {
		texts[i] = "a few words"
	}
	res = call(t, cs, "count_tokens", map[string]any{"texts": texts}, nil)
	wire, _ = json.Marshal(res)
	text := ""
	if len(res.Content) == 1 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if !res.IsError || len(wire) > mcpserver.DefaultMaxResultBytes || strings.Contains(text, "\n") || !strings.Contains(text, mcpserver.SpillDir+"/count_tokens-") {
		t.Fatalf("counts of 5,000 texts: isError %v, %d bytes, text %q", res.IsError, len(wire), text)
	}
	name := text[strings.Index(text, mcpserver.SpillDir):]
	name = name[:strings.Index(name, ".json")+len(".json")]
	var saved mcpserver.CountOut
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || json.Unmarshal(data, &saved) != nil || len(saved.Counts) != 5000 || saved.Total != 5000*tokens.Count("a few words") {
		t.Errorf("saved result %s: %d counts, total %d (err %v)", name, len(saved.Counts), saved.Total, err)
	}
	// The server still serves after it.
	var small mcpserver.CountOut
	if res := call(t, cs, "count_tokens", map[string]any{"texts": []string{"two words"}}, &small); res.IsError || small.Total == 0 {
		t.Errorf("a small count after a spilled one: %+v", res)
	}
}
