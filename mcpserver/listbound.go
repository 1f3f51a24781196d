package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// boundLists refuses a tools/call whose documents (or count_tokens' files)
// list is over MaxDocuments before the SDK decodes its arguments. Decoded
// into values for the schema check and again into the tool's input, a list
// of short paths takes some 80 times the bytes it came in: a 16 MiB line of
// "." would be over a GB. Counted here, the list costs one pass over its
// bytes and no memory of its own. The tools check the length again (a
// list this misses, such as one under a key spelled with escapes, is
// refused there, decoded).
func (s *Server) boundLists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if method != "tools/call" || !ok || len(p.Arguments) == 0 {
			return next(ctx, method, req)
		}
		var err error
		switch p.Name {
		case "ask", "outline":
			var args struct {
				Documents listLen `json:"documents"`
			}
			if json.Unmarshal(p.Arguments, &args) == nil && args.Documents > MaxDocuments {
				err = documentCount(int(args.Documents))
			}
		case "count_tokens":
			var args struct {
				Files listLen `json:"files"`
			}
			if json.Unmarshal(p.Arguments, &args) == nil && args.Files > MaxDocuments {
				err = filesCount(int(args.Files))
			}
		}
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		return next(ctx, method, req)
	}
}

// listLen is the number of elements of a JSON array, counted without
// decoding them; 0 for anything else (the tool's own decoding says what
// is wrong with it).
type listLen int

func (n *listLen) UnmarshalJSON(data []byte) error {
	*n = 0
	if len(data) == 0 || data[0] != '[' {
		return nil
	}
	depth, inString, escaped, some := 0, false, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth == 1 {
				continue
			}
		case c == ']' || c == '}':
			depth--
			continue
		case c == ',' && depth == 1:
			*n++
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		some = true
	}
	if some {
		*n++
	}
	return nil
}

// filesCount refuses count_tokens' files over MaxDocuments.
func filesCount(n int) error {
	if n > MaxDocuments {
		return fmt.Errorf("%w: %d files given, over the limit of %d documents per call", ErrTooManyDocuments, n, MaxDocuments)
	}
	return nil
}
