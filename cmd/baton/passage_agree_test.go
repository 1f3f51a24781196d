package main

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
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// oneLineBiography is a document with no heading and no line break, the
// shape of a long-document QA set's texts: run-in titles only.
func oneLineBiography() string {
	var b strings.Builder
	for i := range 300 {
		if i%10 == 0 {
			fmt.Fprintf(&b, "Period %d. ", i/10+1)
		}
		fmt.Fprintf(&b, "In %d the architect drew plan number %d for a parador in an old castle. ", 1940+i%60, i)
	}
	b.WriteString("Honours. On 3 February 1997 he was elected Academician of the Royal Academy of Fine Arts of San Fernando.")
	return b.String()
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// mcpSession is a client connected in memory to an MCP server over root;
// both close when the test ends.
func mcpSession(t *testing.T, root string) *mcp.ClientSession {
	t.Helper()
	s, err := mcpserver.New(mcpserver.Config{Root: root, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.SDK().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The CLI, the MCP tools and the run record name the same passages: baton
// slice --passages and the outline tool list the same index, --passage and
// the slice tool cut the same text, and an ask over a document with no
// headings points at passages from that index instead of sending the whole
// document.
func TestPassagesAgreeAcrossCLIAndMCPAndRecord(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	text := oneLineBiography()
	path := filepath.Join(dir, "bio.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBaton(t, "", "slice", "--doc", path, "--passages", "--json")
	if code != exitOK {
		t.Fatalf("slice --passages: exit %d: %s", code, errOut)
	}
	var cli []slice.Passage
	if err := json.Unmarshal([]byte(out), &cli); err != nil || len(cli) < 5 {
		t.Fatalf("slice --passages --json: %v, %d passages", err, len(cli))
	}

	cs := mcpSession(t, dir)
	var o mcpserver.OutlineOut
	mcpCall(t, cs, "outline", map[string]any{"documents": []string{"bio.txt"}}, &o)
	got := o.Outline.Documents[0].Passages
	if fmt.Sprint(got) != fmt.Sprint(cli) {
		t.Fatalf("outline tool passages differ from baton slice --passages:\n%v\n%v", got, cli)
	}
	if !strings.Contains(o.Text, "\np2 [line 1, ") {
		t.Errorf("outline text does not list the passages:\n%s", o.Text[:min(len(o.Text), 400)])
	}

	code, out, errOut = runBaton(t, "", "slice", "--doc", path, "--passage", "p2", "--passage", "p4-p5", "--json")
	if code != exitOK {
		t.Fatalf("slice --passage: exit %d: %s", code, errOut)
	}
	var cut sliceJSON
	if err := json.Unmarshal([]byte(out), &cut); err != nil {
		t.Fatal(err)
	}
	var tool mcpserver.SliceOut
	mcpCall(t, cs, "slice", map[string]any{"document": "bio.txt", "passages": []string{"p2", "p4-p5"}}, &tool)
	want := text[cli[1].Start:cli[1].End] + "\n" + text[cli[3].Start:cli[4].End]
	if cut.Text != want || tool.Text != want || cut.Fallback || tool.Fallback {
		t.Fatalf("--passage and the slice tool cut differently:\ncli  %q\ntool %q\nwant %q", cut.Text, tool.Text, want)
	}

	code, out, errOut = runBaton(t, "", "ask", "--dry-run", "--json", "--no-save", "--doc", path, "When was he elected Academician of the Royal Academy?")
	if code != exitOK {
		t.Fatalf("ask: exit %d: %s", code, errOut)
	}
	var rec orchestrate.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Subtasks) != 1 || rec.Subtasks[0].Slice == nil || rec.Subtasks[0].Slice.Fallback {
		t.Fatalf("ask over a one-line document fell back to the whole document: %s", out[:min(len(out), 2000)])
	}
	for _, m := range rec.Subtasks[0].Slice.Matched {
		a, b := m.Pointer, m.Pointer
		if i := strings.IndexByte(m.Pointer, '-'); i > 0 {
			a, b = m.Pointer[:i], m.Pointer[i+1:]
		}
		first, last := passageByID(t, cli, a), passageByID(t, cli, b)
		if m.Bytes == nil || m.Bytes[0] != first.Start || m.Bytes[1] != last.End {
			t.Errorf("record's %s spans %v, the index %d-%d", m.Pointer, m.Bytes, first.Start, last.End)
		}
		if strings.Contains(text[first.Start:last.End], "elected Academician") {
			return
		}
	}
	t.Errorf("no passage sent holds the answer: %+v", rec.Subtasks[0].Slice.Matched)
}

func passageByID(t *testing.T, ps []slice.Passage, id string) slice.Passage {
	t.Helper()
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no passage %q", id)
	return slice.Passage{}
}
