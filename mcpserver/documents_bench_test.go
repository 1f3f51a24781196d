package mcpserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// BenchmarkAskManyNames is ask over the MCP wire (in memory), as a dry run
// with no provider, given one file (or ".") named n times: 50,000 names,
// and "." 200,000 times (a 1 MB request), are refused by the list's
// length, and MaxDocuments names are folded to one read and planned. The
// acceptance is well under a second per call.
//
//	go test ./mcpserver -run '^$' -bench AskManyNames -benchtime 5x
func BenchmarkAskManyNames(b *testing.B) {
	for _, c := range []struct {
		label, name string
		n           int
	}{{"file", "a.md", 50_000}, {"root", ".", 200_000}, {"file", "a.md", mcpserver.MaxDocuments}} {
		n := c.n
		b.Run(fmt.Sprintf("%s/names=%d", c.label, n), func(b *testing.B) {
			root := b.TempDir()
			writeTree(b, root, map[string]string{"a.md": "# Alpha\n\nThe alpha plan.\n\n## Costs\n\nTen a seat.\n"})
			s, cs := serveCounted(b, mcpserver.Config{Root: root, Getenv: env(nil)})
			docs := make([]string, n)
			for i := range docs {
				docs[i] = c.name
				if i%2 == 1 {
					docs[i] = "./" + c.name
				}
			}
			args := map[string]any{"task": "What do seats cost?", "documents": docs, "dry_run": true}
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: args})
				if err != nil {
					b.Fatal(err)
				}
				if refused := n > mcpserver.MaxDocuments; res.IsError != refused {
					b.Fatalf("%d names: isError %v: %s", n, res.IsError, resultText(res))
				}
			}
			_, _, reads := s.DocumentOps()
			b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		})
	}
}
