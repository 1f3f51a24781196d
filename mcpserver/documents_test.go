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
)

// serveCounted is serve, with the server returned too for its counters.
func serveCounted(t testing.TB, cfg mcpserver.Config) (*mcpserver.Server, *mcp.ClientSession) {
	t.Helper()
	cfg.Version = "test"
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
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return s, cs
}

// writeTree writes files (slash paths) under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// documentsArgs is a call of tool over docs: ask as a dry run with no
// provider, so nothing but the documents is at work.
func documentsArgs(tool string, docs []string) map[string]any {
	if tool == "ask" {
		return map[string]any{"task": "Compare the plans", "documents": docs, "dry_run": true}
	}
	return map[string]any{"documents": docs}
}

// documentNames is the documents a successful outline or ask took: the
// outline's documents, or the ask's run record's.
func documentNames(t *testing.T, tool, root string, res *mcp.CallToolResult) []string {
	t.Helper()
	data, _ := json.Marshal(res.StructuredContent)
	if tool == "outline" {
		var out mcpserver.OutlineOut
		if err := json.Unmarshal(data, &out); err != nil || out.Outline == nil {
			t.Fatalf("outline: %s (%v)", data, err)
		}
		var names []string
		for _, d := range out.Outline.Documents {
			names = append(names, d.Name)
		}
		return names
	}
	var out mcpserver.AskOut
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("ask: %s (%v)", data, err)
	}
	rec, _ := readRecord(t, root, out.Record)
	return rec.Documents
}

// The same file named several ways (a path and its ./ spelling, a path
// through .., a symlink to it, the folder holding it, the root itself) is
// read once by outline and by ask alike, under the first name it was
// given, and a folder named after its files adds only the ones not yet
// taken.
func TestDocumentsFoldRepeats(t *testing.T) {
	for _, tool := range []string{"outline", "ask"} {
		t.Run(tool, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{
				"a.md":        "# Alpha\n\nThe alpha plan.\n",
				"notes/x.md":  "# X\n\nThe x plan.\n",
				"notes/y.txt": "The y plan.\n",
			})
			if err := os.Symlink("a.md", filepath.Join(root, "link.md")); err != nil {
				t.Fatal(err)
			}
			s, cs := serveCounted(t, mcpserver.Config{Root: root, Getenv: env(nil)})
			docs := []string{"a.md", "./a.md", "notes/../a.md", "link.md", "notes/x.md", "notes", "./notes/", ".", "notes/y.txt"}
			res := call(t, cs, tool, documentsArgs(tool, docs), nil)
			if res.IsError {
				t.Fatalf("%s %v: %s", tool, docs, resultText(res))
			}
			want := []string{"a.md", "notes/x.md", "notes/y.txt"}
			if got := documentNames(t, tool, root, res); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("documents %v, want %v", got, want)
			}
			if _, _, reads := s.DocumentOps(); reads != int64(len(want)) {
				t.Errorf("%d files read for %d distinct files", reads, len(want))
			}
		})
	}
}

// A documents list longer than MaxDocuments is refused, by outline and ask
// alike, with one line naming the limit, before any file is looked at: one
// file named 50,000 times, and "." named 200,000 times (a 1 MB request),
// cost no stat, walk or read.
func TestDocumentsListIsBoundedBeforeTheFileSystem(t *testing.T) {
	cases := []struct {
		tool, name string
		n          int
	}{
		{"ask", "a.md", 50_000},
		{"outline", "a.md", 50_000},
		{"ask", ".", 200_000},
		{"outline", ".", 200_000},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %q x %d", c.tool, c.name, c.n), func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{}
			for i := range 20 {
				files[fmt.Sprintf("d%02d.md", i)] = fmt.Sprintf("# Part %d\n\nText %d.\n", i, i)
			}
			files["a.md"] = "# Alpha\n\nThe alpha plan.\n"
			writeTree(t, root, files)
			s, cs := serveCounted(t, mcpserver.Config{Root: root, Getenv: env(nil)})
			docs := make([]string, c.n)
			for i := range docs {
				docs[i] = c.name
			}
			res := call(t, cs, c.tool, documentsArgs(c.tool, docs), nil)
			msg := resultText(res)
			want := fmt.Sprintf("%d paths given, over the limit of %d documents per call", c.n, mcpserver.MaxDocuments)
			if !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
				t.Errorf("isError %v, %q: want one line saying %q", res.IsError, msg, want)
			}
			if stats, walks, reads := s.DocumentOps(); stats+walks+reads != 0 {
				t.Errorf("%d stats, %d walks, %d reads before refusing a list", stats, walks, reads)
			}
		})
	}
}

// The cap counts files after folders are expanded: a folder of
// MaxDocuments+1 files is refused, and so are files whose sizes together
// pass MaxDocumentBytes; each is refused by what the folder and the sizes
// say, before any file is read.
func TestDocumentsCappedAfterExpansion(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range mcpserver.MaxDocuments + 1 {
		files[fmt.Sprintf("many/%04d.md", i)] = "# A\n"
	}
	writeTree(t, root, files)
	for _, name := range []string{"big/one.md", "big/two.md"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		// Sparse: the size is what counts, and nothing is written.
		if f, err := os.Create(p); err != nil || f.Truncate(mcpserver.MaxDocumentBytes/2+1) != nil || f.Close() != nil {
			t.Fatalf("sparse file %s: %v", name, err)
		}
	}
	for _, tool := range []string{"outline", "ask"} {
		for _, c := range []struct {
			docs []string
			want string
		}{
			{[]string{"many"}, fmt.Sprintf("over the limit of %d documents per call", mcpserver.MaxDocuments)},
			{[]string{"big"}, fmt.Sprintf("over the limit of %d MiB per call", mcpserver.MaxDocumentBytes>>20)},
			{[]string{"big/one.md", "big/two.md"}, fmt.Sprintf("over the limit of %d MiB per call", mcpserver.MaxDocumentBytes>>20)},
		} {
			t.Run(tool+" "+strings.Join(c.docs, ","), func(t *testing.T) {
				s, cs := serveCounted(t, mcpserver.Config{Root: root, Getenv: env(nil)})
				res := call(t, cs, tool, documentsArgs(tool, c.docs), nil)
				msg := resultText(res)
				if !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
					t.Errorf("isError %v, %q: want one line saying %q", res.IsError, msg, c.want)
				}
				if _, _, reads := s.DocumentOps(); reads != 0 {
					t.Errorf("%d files read before refusing", reads)
				}
			})
		}
	}
}

// The documents' schema tells a host the limits the tools hold to.
func TestDocumentsLimitsInTheSchema(t *testing.T) {
	_, cs := serveCounted(t, mcpserver.Config{Root: t.TempDir()})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("at most %d files", mcpserver.MaxDocuments), fmt.Sprintf("%d MiB", mcpserver.MaxDocumentBytes>>20), "read once"}
	seen := 0
	for _, tool := range res.Tools {
		if tool.Name != "outline" && tool.Name != "ask" {
			continue
		}
		seen++
		data, _ := json.Marshal(tool.InputSchema)
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s's input schema does not say %q: %s", tool.Name, w, data)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d of outline and ask listed", seen)
	}
}

// count_tokens holds its files to the same bounds: a list over
// MaxDocuments is refused before any file is read, and files over
// MaxDocumentBytes in all are refused once the total passes it.
func TestCountTokensFilesAreBounded(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "# Alpha\n"})
	// Sparse: the size is what counts, and nothing is written. It fits
	// alone, not after a.md.
	if f, err := os.Create(filepath.Join(root, "full.md")); err != nil || f.Truncate(mcpserver.MaxDocumentBytes) != nil || f.Close() != nil {
		t.Fatalf("sparse file: %v", err)
	}
	files := make([]string, 50_000)
	for i := range files {
		files[i] = "a.md"
	}
	for _, c := range []struct {
		files []string
		want  string
		reads int64
	}{
		{files, fmt.Sprintf("50000 files given, over the limit of %d documents per call", mcpserver.MaxDocuments), 0},
		{[]string{"a.md", "full.md"}, fmt.Sprintf("over the limit of %d MiB per call", mcpserver.MaxDocumentBytes>>20), 1},
	} {
		s, cs := serveCounted(t, mcpserver.Config{Root: root})
		res := call(t, cs, "count_tokens", map[string]any{"files": c.files}, nil)
		if msg := resultText(res); !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("%d files: isError %v, %q: want one line saying %q", len(c.files), res.IsError, msg, c.want)
		}
		if _, _, reads := s.DocumentOps(); reads != c.reads {
			t.Errorf("%d files: %d read, want %d", len(c.files), reads, c.reads)
		}
	}
}
