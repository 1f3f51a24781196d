package llmtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/llm"
)

// Bodies as the services document them, so that the parser is checked
// against the real shapes and not only against what baton's adapters send.
const (
	anthropicToolBody = `{"model":"claude-sonnet-4-5","max_tokens":100,
		"tools":[{"name":"read_file","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],
		"tool_choice":{"type":"any"},
		"messages":[
		{"role":"user","content":"Read a.md"},
		{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{ "path" : "a.md" }}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"hello"}],"is_error":false},{"type":"text","text":"Go on."}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"read_file","input":{"path":"../x"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"outside the workspace","is_error":true}]}]}`
	openAIToolBody = `{"model":"gpt-4o-mini",
		"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}],
		"tool_choice":"required",
		"messages":[
		{"role":"user","content":"Read a.md"},
		{"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{ \"path\" : \"a.md\" }"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"hello"},
		{"role":"user","content":"Go on."},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"../x\""}},{"id":"call_3","type":"function","function":{"name":"read_file","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_2","content":"Error: outside the workspace"},
		{"role":"tool","tool_call_id":"call_3","content":[{"type":"text","text":"empty"}]}]}`
)

func TestToolRequestsAreRecorded(t *testing.T) {
	tests := []struct {
		name, path, body string
		wantChoice       string
		want             []llm.Message
	}{
		{name: "anthropic", path: "/v1/messages", body: anthropicToolBody, wantChoice: "any", want: []llm.Message{
			{Role: llm.RoleUser, Content: "Read a.md"},
			{Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.md"}`)}}},
			{Role: llm.RoleUser, Content: "Go on.", ToolResults: []llm.ToolResult{{CallID: "toolu_1", Content: "hello"}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "toolu_2", Name: "read_file", Input: json.RawMessage(`{"path":"../x"}`)}}},
			{Role: llm.RoleUser, ToolResults: []llm.ToolResult{{CallID: "toolu_2", Content: "outside the workspace", IsError: true}}},
		}},
		{name: "openai", path: "/v1/chat/completions", body: openAIToolBody, wantChoice: "required", want: []llm.Message{
			{Role: llm.RoleUser, Content: "Read a.md"},
			{Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.md"}`)}}},
			// The tool message and the user message after it are one turn.
			{Role: llm.RoleUser, Content: "Go on.", ToolResults: []llm.ToolResult{{CallID: "call_1", Content: "hello"}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_2", Name: "read_file", Input: json.RawMessage(`"{\"path\":\"../x\""`)},
				{ID: "call_3", Name: "read_file", Input: json.RawMessage(`{}`)}}},
			{Role: llm.RoleUser, ToolResults: []llm.ToolResult{
				{CallID: "call_2", Content: "Error: outside the workspace"}, {CallID: "call_3", Content: "empty"}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, Always(Text("ok")))
			status, _, body := post(t, s, tc.path, tc.body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			r := s.Requests()[0]
			if d := cmp.Diff(tc.want, r.Messages); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"read_file"}, r.ToolNames()); d != "" || r.Tools[0].Description != "Read a file." ||
				r.Tools[0].Schema["type"] != "object" || r.ToolChoice != tc.wantChoice {
				t.Errorf("tools %+v choice %q", r.Tools, r.ToolChoice)
			}
			if n := len(r.ToolResults()); n != 3 && tc.name == "openai" || n != 2 && tc.name == "anthropic" {
				t.Errorf("%d tool results", n)
			}
		})
	}
}

func TestToolRequestsAreCheckedLikeTheServices(t *testing.T) {
	anthropic := func(msgs string) string {
		return `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"object"}}],"messages":[` + msgs + `]}`
	}
	openAI := func(msgs string) string {
		return `{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[` + msgs + `]}`
	}
	const (
		user     = `{"role":"user","content":"x"}`
		aCall    = `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`
		oCall    = `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
		aResult  = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}`
		aMessage = "/v1/messages"
		oChat    = "/v1/chat/completions"
	)
	tests := []struct{ name, path, body, want string }{
		{"anthropic tools without a schema", aMessage, `{"model":"m","max_tokens":5,"tools":[{"name":"f"}],"messages":[` + user + `]}`, "input_schema"},
		{"anthropic schema not an object", aMessage, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"string"}}],"messages":[` + user + `]}`, `must be \"object\"`},
		{"anthropic tool blocks need tools", aMessage, `{"model":"m","max_tokens":5,"messages":[` + user + `,` + aCall + `,` + aResult + `]}`, "must define tools"},
		{"anthropic result for no call", aMessage, anthropic(user + `,` + aResult), `result for call \"t1\"`},
		{"anthropic call without result", aMessage, anthropic(user + `,` + aCall + `,` + user), "have no result"},
		{"anthropic result after text", aMessage, anthropic(user + `,` + aCall + `,` +
			`{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t1","content":"r"}]}`), "must come first"},
		{"anthropic tool_use in a user turn", aMessage, anthropic(`{"role":"user","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`), "assistant turns"},
		{"anthropic unknown tool choice", aMessage, strings.Replace(anthropic(user), `"tools"`, `"tool_choice":{"type":"required"},"tools"`, 1), "unknown choice"},
		{"anthropic choice names an unknown tool", aMessage, strings.Replace(anthropic(user), `"tools"`, `"tool_choice":{"type":"tool","name":"g"},"tools"`, 1), "not a defined tool"},
		{"openai tool type", oChat, `{"model":"m","tools":[{"type":"custom","custom":{"name":"f"}}],"messages":[` + user + `]}`, "function"},
		{"openai tool message without id", oChat, openAI(user + `,` + oCall + `,{"role":"tool","content":"r"}`), "tool_call_id"},
		{"openai result for the wrong call", oChat, openAI(user + `,` + oCall + `,{"role":"tool","tool_call_id":"c9","content":"r"}`), `\"c9\"`},
		{"openai call without result", oChat, openAI(user + `,` + oCall), "no results follow"},
		{"openai any is not a word", oChat, strings.Replace(openAI(user), `"tools"`, `"tool_choice":"any","tools"`, 1), "unknown choice"},
	}
	s := NewServer(t, Always(Text("unused")))
	for _, tc := range tests {
		status, _, body := post(t, s, tc.path, tc.body)
		if status != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: got %d %s, want 400 mentioning %s", tc.name, status, body, tc.want)
		}
	}
}

// Replies with tool calls in every shape the server writes, read back the way
// a client reads them.
func TestToolReplies(t *testing.T) {
	reply := Reply{ToolCalls: []llm.ToolCall{Call("read_file", `{"path":"a.md"}`), {ID: "mine", Name: "finish"}}}
	s := NewServer(t, Always(reply))

	_, _, body := post(t, s, "/v1/messages", anthropicBody)
	var m struct {
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"type": "tool_use", "id": "toolu_llmtest_0001_0", "name": "read_file", "input": map[string]any{"path": "a.md"}},
		{"type": "tool_use", "id": "mine", "name": "finish", "input": map[string]any{}},
	}
	if d := cmp.Diff(want, m.Content); d != "" || m.StopReason != "tool_use" {
		t.Errorf("anthropic content (-want +got):\n%s stop %q", d, m.StopReason)
	}

	_, _, body = post(t, s, "/v1/chat/completions", openAIBody)
	var c struct {
		Choices []struct {
			Message      map[string]any `json:"message"`
			FinishReason string         `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	msg := c.Choices[0].Message
	if content, ok := msg["content"]; !ok || content != nil || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("openai message %v finish %q: want content null", msg, c.Choices[0].FinishReason)
	}
	calls, _ := msg["tool_calls"].([]any)
	if len(calls) != 2 || !strings.Contains(body, `"arguments":"{\"path\":\"a.md\"}"`) || !strings.Contains(body, `"id":"call_llmtest_0002_0"`) {
		t.Errorf("openai tool calls %s", body)
	}

	_, _, body = post(t, s, "/v1/messages", strings.Replace(anthropicBody, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1))
	events, data := readSSE(t, body)
	if events[1] != "content_block_start" || !strings.Contains(data[1], `"type":"tool_use"`) || !strings.Contains(body, `"input_json_delta"`) {
		t.Errorf("anthropic stream:\n%s", body)
	}
	var partial strings.Builder
	for _, d := range data {
		var ev struct {
			Index int `json:"index"`
			Delta struct {
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if json.Unmarshal([]byte(d), &ev) == nil && ev.Index == 0 {
			partial.WriteString(ev.Delta.PartialJSON)
		}
	}
	if partial.String() != `{"path":"a.md"}` {
		t.Errorf("streamed input %q", partial.String())
	}
}

func TestJSONPieces(t *testing.T) {
	for _, s := range []string{"", "{}", `{"query":"näive ✓ budget, long enough to split"}`} {
		if got := strings.Join(jsonPieces(s), ""); got != s {
			t.Errorf("pieces of %q join to %q", s, got)
		}
	}
}
