package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bound is the last guard of the result bound, for every tool: a tools/call
// result still over the bound after the tool's own spilling (a long list
// of counts, matches or findings) is written whole under SpillDir, and the
// host gets instead an error result of one line saying where it went and
// how large it is. An error result is used because it needs no
// structuredContent, so the tool's output schema still holds.
func (s *Server) bound(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		tr, ok := res.(*mcp.CallToolResult)
		if err != nil || method != "tools/call" || !ok {
			return res, err
		}
		data, err := json.Marshal(tr)
		if err != nil || len(data) <= s.maxResult {
			return res, nil
		}
		tool := "tool"
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && safeName(p.Name) {
			tool = p.Name
		}
		body := data
		if tr.StructuredContent != nil {
			if b, err := json.MarshalIndent(tr.StructuredContent, "", "  "); err == nil {
				body = b
			}
		}
		name, werr := s.writeSpill(tool, "json", body)
		msg := fmt.Sprintf("the %s result is %d bytes, over the %d-byte bound for a result; it was written to %s: ask for less (fewer files, sections or texts) or read the file in pieces", tool, len(data), s.maxResult, name)
		if werr != nil {
			msg = fmt.Sprintf("the %s result is %d bytes, over the %d-byte bound for a result, and could not be saved: %v", tool, len(data), s.maxResult, werr)
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
	}
}

// safeName reports whether a tool name can be part of a file name as it is.
func safeName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
