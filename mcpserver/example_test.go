package mcpserver_test

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// A server that may write one ledger, notes/ledger.md: ledger_append
// writes it, and refuses any other path (here another agent's
// instruction file) in one line.
func ExampleConfig_ledgers() {
	dir, _ := os.MkdirTemp("", "baton-mcp-example")
	defer os.RemoveAll(dir)
	s, err := mcpserver.New(mcpserver.Config{Root: dir, Version: "example", Ledgers: []string{"notes/ledger.md"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.SDK().Connect(ctx, st, nil); err != nil {
		fmt.Println(err)
		return
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	for _, ledger := range []string{"notes/ledger.md", "docs/notes.md"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ledger_append", Arguments: map[string]any{
			"ledger": ledger, "phase": "draft", "time": "2026-01-02T15:04:05Z", "frozen_decisions": []string{},
			"done_so_far": []any{}, "artifacts": []string{}, "current_phase": "draft", "next_step": "review", "open_tickets": []string{},
		}})
		if err != nil {
			fmt.Println(err)
			return
		}
		if res.IsError {
			fmt.Println(res.Content[0].(*mcp.TextContent).Text)
		} else {
			fmt.Println("appended to", res.StructuredContent.(map[string]any)["ledger"])
		}
	}
	// Output:
	// appended to notes/ledger.md
	// ledger_append: docs/notes.md is not a ledger this server may write (allowed: notes/ledger.md); start baton mcp with --ledger docs/notes.md or name it as ledger: in baton.yaml
}
