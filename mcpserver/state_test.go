package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/state"
)

const stateYAML = `# baton cockpit: edit by hand if you like
version: 1   # schema

handoff:
  # who goes next
  next_skill: plan
  next_step: 'write the parser'   # quoted on purpose
  open_decisions:
    - "keep JSON Lines"   # frozen
    - second
  context: |
    a block
    of text

epic_cycle:
  current_step: analyse
  completed_steps: [one, two]

user_notes:
  owner: "Ada"
  weird key: yes
`

func stateRoot(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "specs/state.yaml"), []byte(stateYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	// The files TestStateBadInput sets are declared, so that what refuses
	// them is the second line (confinement, the file's content).
	return connectDeclared(t, dir, nil, []string{"specs/state.yaml", "out/state.yaml", "out/new-state.yaml",
		"out/sub/state.yaml", "link-state.yaml", "bad-state.yaml", "alias.state.yaml", "new/state.yaml"})
}

// edited returns the lines of before and after that differ, once the
// lines they share at the start and at the end are taken off.
func edited(before, after string) (removed, added []string) {
	b, a := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	i := 0
	for i < len(b) && i < len(a) && b[i] == a[i] {
		i++
	}
	j := 0
	for j < len(b)-i && j < len(a)-i && b[len(b)-1-j] == a[len(a)-1-j] {
		j++
	}
	removed, added = b[i:len(b)-j], a[i:len(a)-j]
	if len(removed) == 0 {
		removed = nil
	}
	if len(added) == 0 {
		added = nil
	}
	return removed, added
}

// state_set changes only the lines of the value it edits: every other line
// of a commented state.yaml, its comments, order and quoting, keeps its
// bytes. A new key is inserted, with its own keys in the order given.
func TestStateSetKeepsEveryOtherLine(t *testing.T) {
	cs, dir := stateRoot(t)
	path := filepath.Join(dir, "specs/state.yaml")
	for _, c := range []struct {
		name           string
		args           string // JSON, as a host writes it: the keys of value in this order
		removed, added []string
	}{
		{"replace a quoted scalar", `{"key": "handoff.next_step", "value": "review the parser"}`,
			[]string{"  next_step: 'write the parser'   # quoted on purpose\n"},
			[]string{"  next_step: review the parser   # quoted on purpose\n"}},
		{"a number", `{"key": "epic_cycle.current_step", "value": 3}`,
			[]string{"  current_step: analyse\n"}, []string{"  current_step: 3\n"}},
		{"a new mapping keeps its key order", `{"key": "handoff.review", "value": {"z": 1, "a": ["x", true]}}`,
			nil, []string{"  review:\n", "    z: 1\n", "    a:\n", "      - x\n", "      - true\n"}},
		{"append to a block list", `{"key": "handoff.open_decisions", "value": "third", "append": true}`,
			nil, []string{"    - third\n"}},
		{"a new top-level key", `{"state": "specs/state.yaml", "key": "metrics.runs", "value": 1}`,
			nil, []string{"metrics:\n", "  runs: 1\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadFile(path)
			var out mcpserver.StateSetOut
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "state_set", Arguments: json.RawMessage(c.args)})
			if err != nil || res.IsError {
				t.Fatalf("state_set: %v %v", err, res)
			}
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &out)
			after, _ := os.ReadFile(path)
			removed, added := edited(string(before), string(after))
			if d := cmp.Diff(c.removed, removed); d != "" {
				t.Errorf("lines removed (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.added, added); d != "" {
				t.Errorf("lines added (-want +got):\n%s\nfile:\n%s", d, after)
			}
			if !out.Changed || out.Bytes != len(after) || out.State != "specs/state.yaml" || !strings.Contains(c.args, `"`+out.Key+`"`) {
				t.Errorf("result %+v, file of %d bytes", out, len(after))
			}
		})
	}
	// The same set again changes nothing.
	before, _ := os.ReadFile(path)
	var out mcpserver.StateSetOut
	call(t, cs, "state_set", map[string]any{"key": "handoff.next_step", "value": "review the parser"}, &out)
	after, _ := os.ReadFile(path)
	if out.Changed || string(after) != string(before) || out.Bytes != len(before) {
		t.Errorf("a repeated set: %+v; file changed %v", out, string(after) != string(before))
	}
	// The package reads back what the tool wrote.
	f, err := state.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Get("handoff", "review", "a"); !cmp.Equal(v, []any{"x", true}) {
		t.Errorf("handoff.review.a read back as %#v", v)
	}
}

// state_get gives a value as JSON and as YAML, by a dotted key that may
// index a list, or the whole file as its own text.
func TestStateGet(t *testing.T) {
	cs, _ := stateRoot(t)
	for _, c := range []struct {
		key   string
		found bool
		value any
		text  string
	}{
		{"handoff.next_skill", true, "plan", "plan\n"},
		{"handoff.open_decisions.0", true, "keep JSON Lines", "keep JSON Lines\n"},
		{"version", true, float64(1), "1\n"},
		{"epic_cycle.completed_steps", true, []any{"one", "two"}, "- one\n- two\n"},
		{"user_notes.weird key", true, "yes", "\"yes\"\n"},
		{"handoff.missing", false, nil, ""},
		{"handoff.next_skill.deeper", false, nil, ""},
		{"handoff.open_decisions.7", false, nil, ""},
		{"", true, nil, stateYAML},
	} {
		var out mcpserver.StateGetOut
		if res := call(t, cs, "state_get", map[string]any{"key": c.key}, &out); res.IsError {
			t.Errorf("state_get %q: %v", c.key, res.Content)
			continue
		}
		if c.key == "" {
			m, _ := out.Value.(map[string]any)
			if !out.Found || out.Text != c.text || m["handoff"] == nil {
				t.Errorf("whole file: found %v, value %v, text %q", out.Found, out.Value, out.Text)
			}
			continue
		}
		if out.Found != c.found || !cmp.Equal(out.Value, c.value) || out.Text != c.text || out.State != "specs/state.yaml" {
			t.Errorf("state_get %q: %+v, want found %v value %#v text %q", c.key, out, c.found, c.value, c.text)
		}
	}
}

// YAML's .nan and .inf, which JSON cannot carry, come back as their YAML
// spelling rather than failing the call.
func TestStateGetNotANumber(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "state.yaml"), []byte("limits:\n  low: -.inf\n  odd: .nan\n"), 0o644)
	cs, _ := connectIn(t, dir)
	var out mcpserver.StateGetOut
	if res := call(t, cs, "state_get", map[string]any{"state": "state.yaml", "key": "limits"}, &out); res.IsError {
		t.Fatalf("state_get: %v", res.Content)
	}
	if want := map[string]any{"low": "-.inf", "odd": ".nan"}; !cmp.Equal(out.Value, any(want)) {
		t.Errorf("limits: %#v, want %#v", out.Value, want)
	}
	if !strings.Contains(out.Text, "odd: .nan") {
		t.Errorf("limits as YAML: %q", out.Text)
	}
}

// Bad keys, paths out of the root, a missing or malformed file and an edit
// the file's shape does not allow are one-line tool errors that leave the
// file as it was; the server goes on serving.
func TestStateBadInput(t *testing.T) {
	cs, dir := stateRoot(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "state.yaml"), []byte("secret: 1\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Symlink(filepath.Join(outside, "state.yaml"), filepath.Join(dir, "link-state.yaml"))
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("a: [1,\n"), 0o644)
	path := filepath.Join(dir, "specs/state.yaml")
	for _, key := range []string{"a..b", ".a", "a.", " a.b", "a\tb.c"} {
		wantError(t, cs, "state_set", map[string]any{"key": key, "value": 1}, "key", "segment")
		wantError(t, cs, "state_get", map[string]any{"key": key}, "key", "segment")
	}
	wantError(t, cs, "state_set", map[string]any{"key": "", "value": 1}, "key is empty")
	wantError(t, cs, "state_set", map[string]any{"value": 1}, "key")   // the SDK's validator
	wantError(t, cs, "state_set", map[string]any{"key": "a"}, "value") // the SDK's validator
	for _, c := range []struct{ path, want string }{
		{"../x.yaml", "escapes"},
		{"/etc/passwd", "absolute"},
		{"out/state.yaml", "escapes"},
		{"out/new-state.yaml", "escapes"},
		{"out/sub/state.yaml", "escapes"},
		{"link-state.yaml", "escapes"},
	} {
		wantError(t, cs, "state_set", map[string]any{"state": c.path, "key": "a", "value": 1}, c.path, c.want)
		wantError(t, cs, "state_get", map[string]any{"state": c.path}, c.path, c.want)
	}
	wantError(t, cs, "state_get", map[string]any{"state": "nope.yaml"}, "nope.yaml", "no such file")
	wantError(t, cs, "state_get", map[string]any{"state": "bad.yaml"}, "bad.yaml", "malformed")
	if text := toolError(t, cs, "state_get", map[string]any{"state": "bad.yaml"}); strings.Contains(text, dir) {
		t.Errorf("the error names the server's own path: %q", text)
	}
	os.WriteFile(filepath.Join(dir, "bad-state.yaml"), []byte("a: [1,\n"), 0o644)
	wantError(t, cs, "state_set", map[string]any{"state": "bad-state.yaml", "key": "a", "value": 1}, "bad-state.yaml", "malformed")
	os.WriteFile(filepath.Join(dir, "alias.state.yaml"), []byte("h: &x\n  k: 1\nu: *x\n"), 0o644)
	wantError(t, cs, "state_set", map[string]any{"state": "alias.state.yaml", "key": "h.k", "value": 2}, "alias.state.yaml", "h.k", "refused")
	if got, _ := os.ReadFile(filepath.Join(dir, "alias.state.yaml")); string(got) != "h: &x\n  k: 1\nu: *x\n" {
		t.Errorf("a refused edit changed alias.yaml: %q", got)
	}
	wantError(t, cs, "state_set", map[string]any{"key": "handoff.next_skill", "value": "x", "append": true}, "not a list")
	wantError(t, cs, "state_set", map[string]any{"key": "handoff.open_decisions.0", "value": "x"}, "handoff.open_decisions is a list")
	got, _ := os.ReadFile(path)
	if string(got) != stateYAML {
		t.Errorf("a refused edit changed the file:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "state.yaml")); string(got) != "secret: 1\n" {
		t.Errorf("the file outside the root changed: %q", got)
	}
	if names, _ := os.ReadDir(outside); len(names) != 1 {
		t.Errorf("%d files outside the root, want the one there was", len(names))
	}
	var out mcpserver.StateSetOut
	if res := call(t, cs, "state_set", map[string]any{"state": "new/state.yaml", "key": "handoff.next_skill", "value": "plan"}, &out); res.IsError || !out.Changed {
		t.Errorf("a new state file after the refusals: %v %+v", res.Content, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "new/state.yaml")); string(got) != "handoff:\n  next_skill: plan\n" {
		t.Errorf("new state file: %q", got)
	}
}

// state_set waits for the state file's lock, which `baton run` holds while
// it edits the file.
// The server's root given as a relative path (baton mcp's default is the
// working folder) finds the same lock as the absolute path baton run uses.
func TestStateSetTakesTheLock(t *testing.T) {
	for _, relative := range []bool{false, true} {
		t.Run(fmt.Sprint("relative root ", relative), func(t *testing.T) { testStateLock(t, relative) })
	}
}

func testStateLock(t *testing.T, relative bool) {
	cs, dir := stateRoot(t)
	if relative {
		t.Chdir(dir)
		s, err := mcpserver.New(mcpserver.Config{Root: "."})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.SDK().Connect(context.Background(), st, nil); err != nil {
			t.Fatal(err)
		}
		if cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
	}
	path := filepath.Join(dir, "specs/state.yaml")
	unlock, err := state.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "state_set", Arguments: map[string]any{"key": "handoff.next_skill", "value": "review"}})
		var out mcpserver.StateSetOut
		if err == nil && !res.IsError {
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &out)
		}
		done <- out.Changed
	}()
	select {
	case <-done:
		t.Fatal("the edit did not wait for the lock")
	case <-time.After(300 * time.Millisecond):
	}
	if got, _ := os.ReadFile(path); string(got) != stateYAML {
		t.Fatal("the file was edited under someone else's lock")
	}
	unlock()
	select {
	case changed := <-done:
		if !changed {
			t.Error("the edit after the lock changed nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the edit never finished after the lock was released")
	}
}

// A state file over the result bound is written under .baton/mcp whole,
// and the result says where instead of holding it.
func TestStateGetSpillsALargeFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# notes kept by hand\nnotes:\n")
	for i := 0; b.Len() < 2*mcpserver.DefaultMaxResultBytes; i++ {
		fmt.Fprintf(&b, "  - note %d, the pumps at site %d ran all night\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "state.yaml"), []byte(b.String()), 0o644)
	cs, _ := connectIn(t, dir)
	var out mcpserver.StateGetOut
	res := call(t, cs, "state_get", map[string]any{"state": "state.yaml"}, &out)
	data, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !out.Found || out.Spilled == nil || out.Text != "" || out.Value != nil || len(data) > mcpserver.DefaultMaxResultBytes {
		t.Fatalf("state_get of %d bytes: %d bytes of result, spilled %+v", b.Len(), len(data), out.Spilled)
	}
	if got, err := os.ReadFile(filepath.Join(dir, out.Spilled.Path)); err != nil || string(got) != b.String() {
		t.Errorf("spilled file %s: %d bytes (err %v), want the %d-byte file", out.Spilled.Path, len(got), err, b.Len())
	}
	out = mcpserver.StateGetOut{}
	call(t, cs, "state_get", map[string]any{"state": "state.yaml", "key": "notes.3"}, &out)
	if out.Spilled != nil || out.Value != "note 3, the pumps at site 3 ran all night" {
		t.Errorf("one small value: %+v", out)
	}
}
