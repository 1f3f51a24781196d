package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolError calls a tool that must refuse its input and returns the one
// line of the refusal, failing the test when the call succeeded, or the
// text is empty or runs over more than one line.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: a protocol error, want a tool error: %v", name, args, err)
	}
	text := ""
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if !res.IsError || text == "" || strings.ContainsAny(text, "\r\n") {
		t.Errorf("%s %v: isError %v, text %q; want a tool error of one line", name, args, res.IsError, text)
	}
	return text
}

// wantError checks that the refusal names every one of want.
func wantError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, want ...string) {
	t.Helper()
	text := toolError(t, cs, name, args)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s %v: %q does not name %q", name, args, text, w)
		}
	}
}
