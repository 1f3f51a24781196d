package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes bounds one line a client sends over stdio: the SDK's own
// frame bound (16 MiB). Past it a line is refused without being held in
// memory. The body of an HTTP POST keeps the SDK's bound for it,
// MaxHTTPBodyBytes.
const MaxMessageBytes = 16 << 20

// MaxHTTPBodyBytes bounds the body of an HTTP POST: the SDK's default.
const MaxHTTPBodyBytes = mcp.DefaultMaxRequestBodyBytes

// rpcError is the JSON-RPC error baton answers for a message the SDK could
// not read. The SDK ends a stdio session on such a message and answers an
// HTTP one in plain text; JSON-RPC 2.0 asks for an error response and for
// the server to go on.
type rpcError struct {
	code int
	id   json.RawMessage // the request's id when it could be read, else null
	msg  string
}

// line is the error as one newline-free JSON-RPC response.
func (e *rpcError) line() []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{e.code, e.msg}})
	if err != nil {
		// Every field above is marshalable; this cannot happen.
		panic(fmt.Sprintf("mcp: encoding a JSON-RPC error: %v", err))
	}
	return data
}

func parseError(detail string) *rpcError {
	return &rpcError{code: jsonrpc.CodeParseError, msg: "Parse error: " + detail}
}

func invalidRequest(id json.RawMessage, detail string) *rpcError {
	return &rpcError{code: jsonrpc.CodeInvalidRequest, id: id, msg: "Invalid Request: " + detail}
}

// tooLarge is the answer to a message over limit bytes.
func tooLarge(limit int64) *rpcError {
	return invalidRequest(nil, fmt.Sprintf("the message is over %d MiB and was skipped", limit>>20))
}

// checkMessage returns nil when data (one message: a stdio line or an HTTP
// body, already bounded) is one the SDK reads as a JSON-RPC message
// or a batch of them, else the error to answer. The SDK's own decoder
// (jsonrpc.DecodeMessage) decides, so that what passes here is what the
// SDK accepts. msgs are the decoded messages of what passed.
func checkMessage(data []byte) (msgs []jsonrpc.Message, batch bool, _ *rpcError) {
	data = bytes.TrimSpace(data)
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, false, parseError(err.Error())
	}
	if data[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, true, invalidRequest(nil, err.Error())
		}
		if len(raws) == 0 {
			return nil, true, invalidRequest(nil, "an empty batch")
		}
		for i, raw := range raws {
			msg, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, true, invalidRequest(nil, fmt.Sprintf("batch message %d: %v", i+1, err))
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, nil
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, false, invalidRequest(readableID(data), err.Error())
	}
	return []jsonrpc.Message{msg}, false, nil
}

// readableID is the id of a message that is not valid JSON-RPC, when it has
// one JSON-RPC allows (a string or a number), so that the client can match
// the error to its request; nil otherwise.
func readableID(data []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}
