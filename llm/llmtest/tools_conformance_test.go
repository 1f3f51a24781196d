package llmtest_test

// Native tool calling, asserted once for every provider: definitions reach
// the server, calls come back with IDs and parsed input, results go back in
// the provider's real shape, in JSON and in streams.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/tokens"
)

var (
	readFile = llm.Tool{Name: "read_file", Description: "Read a file of the workspace.",
		Schema: map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}},
			"required":   []string{"path"}, "additionalProperties": false}}
	search = llm.Tool{Name: "search", Description: "Search the workspace.",
		Schema: map[string]any{"type": "object",
			"properties": map[string]any{"query": map[string]any{"type": "string"}}}}
	finish = llm.Tool{Name: "finish", Description: "End the step."} // no input
)

func toolRequest(stream bool) *llm.Request {
	return &llm.Request{System: "You are a skill step.", Stream: stream,
		Tools:    []llm.Tool{readFile, search, finish},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Read the capsule and report."}}}
}

// idPrefix is how each provider's tool call IDs begin.
func idPrefix(p provider) string {
	if p.protocol == llmtest.Anthropic {
		return "toolu_"
	}
	return "call_"
}

// toolStop is the provider's stop reason for a turn that calls tools.
func toolStop(p provider) string {
	if p.protocol == llmtest.Anthropic {
		return "tool_use"
	}
	return "tool_calls"
}

func TestToolDefinitionsReachTheServer(t *testing.T) {
	cases := []struct {
		choice   llm.ToolChoice
		want     map[llmtest.Protocol]string // the provider's word
		wantName string
	}{
		{choice: "", want: map[llmtest.Protocol]string{llmtest.Anthropic: "", llmtest.OpenAI: ""}},
		{choice: llm.ToolChoiceAuto, want: map[llmtest.Protocol]string{llmtest.Anthropic: "auto", llmtest.OpenAI: "auto"}},
		{choice: llm.ToolChoiceAny, want: map[llmtest.Protocol]string{llmtest.Anthropic: "any", llmtest.OpenAI: "required"}},
		{choice: "required", want: map[llmtest.Protocol]string{llmtest.Anthropic: "any", llmtest.OpenAI: "required"}},
		{choice: llm.ToolChoiceNone, want: map[llmtest.Protocol]string{llmtest.Anthropic: "none", llmtest.OpenAI: "none"}},
		{choice: llm.ToolNamed("search"), want: map[llmtest.Protocol]string{llmtest.Anthropic: "tool", llmtest.OpenAI: "function"},
			wantName: "search"},
	}
	for _, p := range providers {
		for _, c := range cases {
			t.Run(p.name+"/"+string(c.choice), func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
				req := toolRequest(false)
				req.ToolChoice = c.choice
				resp, err := newModel(t, p, s).Generate(context.Background(), req)
				mustOK(t, resp, err)
				if resp.WantsTools() || resp.ToolCalls != nil {
					t.Errorf("a text answer wants tools: %+v", resp.ToolCalls)
				}
				r := onlyRequest(t, s)
				if d := cmp.Diff([]string{"read_file", "search", "finish"}, r.ToolNames()); d != "" {
					t.Errorf("tool names (-want +got):\n%s", d)
				}
				if r.ToolChoice != c.want[p.protocol] || r.ToolChoiceName != c.wantName {
					t.Errorf("tool choice %q %q, want %q %q", r.ToolChoice, r.ToolChoiceName, c.want[p.protocol], c.wantName)
				}
				rf := r.Tools[0]
				props, _ := rf.Schema["properties"].(map[string]any)
				if rf.Description != readFile.Description || rf.Schema["type"] != "object" || props["path"] == nil ||
					!cmp.Equal(rf.Schema["required"], []any{"path"}) || rf.Schema["additionalProperties"] != false {
					t.Errorf("read_file arrived as %+v", rf)
				}
				if fin := r.Tools[2]; fin.Schema["type"] != "object" {
					t.Errorf("a tool without a schema arrived as %+v; providers need an object schema", fin)
				}
			})
		}
	}
}

func TestToolCallsComeBack(t *testing.T) {
	reply := llmtest.Reply{Text: "Let me look at both.", ToolCalls: []llm.ToolCall{
		llmtest.Call("read_file", `{"path":"specs/capsule.md"}`),
		llmtest.Call("search", `{"query":"näive \"budget\" ✓"}`),
		{Name: "finish"}, // no input at all
	}}
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(p.name+streamName(stream), func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Always(reply))
				resp, err := newModel(t, p, s).Generate(context.Background(), toolRequest(stream))
				mustOK(t, resp, err)
				if !resp.WantsTools() || resp.StopReason != toolStop(p) || resp.Text != "Let me look at both." {
					t.Fatalf("response %+v", resp)
				}
				if len(resp.ToolCalls) != 3 {
					t.Fatalf("%d tool calls, want 3: %+v", len(resp.ToolCalls), resp.ToolCalls)
				}
				ids := map[string]bool{}
				for _, c := range resp.ToolCalls {
					if !strings.HasPrefix(c.ID, idPrefix(p)) || ids[c.ID] {
						t.Errorf("call id %q: want a unique id starting %q", c.ID, idPrefix(p))
					}
					ids[c.ID] = true
				}
				var rf struct{ Path string }
				var sr struct{ Query string }
				var fin struct{}
				if err := resp.ToolCalls[0].Decode(&rf); err != nil || rf.Path != "specs/capsule.md" || resp.ToolCalls[0].Name != "read_file" {
					t.Errorf("first call %+v decoded %+v, %v", resp.ToolCalls[0], rf, err)
				}
				if err := resp.ToolCalls[1].Decode(&sr); err != nil || sr.Query != `näive "budget" ✓` || resp.ToolCalls[1].Name != "search" {
					t.Errorf("second call %+v decoded %+v, %v", resp.ToolCalls[1], sr, err)
				}
				if err := resp.ToolCalls[2].Decode(&fin); err != nil || string(resp.ToolCalls[2].Input) != "{}" {
					t.Errorf("call without input came back as %s, %v", resp.ToolCalls[2].Input, err)
				}
				if stream && p.protocol == llmtest.OpenAI && !s.Requests()[0].IncludeUsage {
					t.Error("stream without usage")
				}
			})
		}
	}
}

func TestToolOnlyReply(t *testing.T) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(p.name+streamName(stream), func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Always(llmtest.CallTools(llmtest.Call("finish", `{}`))))
				resp, err := newModel(t, p, s).Generate(context.Background(), toolRequest(stream))
				mustOK(t, resp, err)
				if resp.Text != "" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "finish" {
					t.Errorf("response %+v", resp)
				}
			})
		}
	}
}

// One agent loop: the model calls two tools, gets their results (one failed)
// and answers. The second request must carry the calls and the results in
// the provider's own shape, which the server parses back.
func TestToolRoundTrip(t *testing.T) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(p.name+streamName(stream), func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Sequence(
					llmtest.CallTools(llmtest.Call("read_file", `{"path":"a.md"}`), llmtest.Call("read_file", `{"path":"../etc/passwd"}`)),
					llmtest.Text("The capsule says hello."),
				))
				m := newModel(t, p, s)
				req := toolRequest(stream)
				var final *llm.Response
				for turn := 0; turn < 4; turn++ {
					resp, err := m.Generate(context.Background(), req)
					mustOK(t, resp, err)
					if !resp.WantsTools() {
						final = resp
						break
					}
					var results []llm.ToolResult
					for _, c := range resp.ToolCalls {
						var in struct{ Path string }
						if err := c.Decode(&in); err != nil {
							t.Fatal(err)
						}
						if strings.Contains(in.Path, "..") {
							results = append(results, c.ErrorResult("path escapes the workspace: "+in.Path))
						} else {
							results = append(results, c.Result("hello"))
						}
					}
					req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
				}
				if final == nil || final.Text != "The capsule says hello." || final.StopReason != p.stop {
					t.Fatalf("final response %+v", final)
				}
				reqs := s.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2", len(reqs))
				}
				first := reqs[0]
				calls := []llm.ToolCall{
					{ID: idPrefix(p) + "llmtest_0001_0", Name: "read_file", Input: json.RawMessage(`{"path":"a.md"}`)},
					{ID: idPrefix(p) + "llmtest_0001_1", Name: "read_file", Input: json.RawMessage(`{"path":"../etc/passwd"}`)},
				}
				failed := llm.ToolResult{CallID: calls[1].ID, Content: "path escapes the workspace: ../etc/passwd", IsError: true}
				if p.protocol == llmtest.OpenAI {
					// No error flag on the wire: the marker is in the text.
					failed = llm.ToolResult{CallID: calls[1].ID, Content: llm.ErrorPrefix + failed.Content}
				}
				want := append(first.Messages,
					llm.Message{Role: llm.RoleAssistant, ToolCalls: calls},
					llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{{CallID: calls[0].ID, Content: "hello"}, failed}},
				)
				second := reqs[1]
				if d := cmp.Diff(want, second.Messages); d != "" {
					t.Errorf("second request's messages (-want +got):\n%s", d)
				}
				if d := cmp.Diff(first.ToolNames(), second.ToolNames()); d != "" || second.System != first.System {
					t.Errorf("tools or system changed between turns: %s", d)
				}
				if p.protocol == llmtest.Anthropic && !second.ToolResults()[1].IsError {
					t.Error("is_error was not sent")
				}
				// The computed usage counts the tool definitions and the
				// results, not just the text.
				if want := countPrompt(second); final.Usage.InputTokens != int64(want) || want <= countText(second) {
					t.Errorf("input tokens %d, want %d (text alone %d)", final.Usage.InputTokens, want, countText(second))
				}
			})
		}
	}
}

// Text sent alongside tool results arrives after them, in one turn.
func TestToolResultsWithText(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			call := llm.ToolCall{ID: "call_1", Name: "search", Input: json.RawMessage(`{"query":"q"}`)}
			req := toolRequest(false)
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: "Searching.", ToolCalls: []llm.ToolCall{call}},
				llm.Message{Role: llm.RoleUser, Content: "Budget: 40% used.", ToolResults: []llm.ToolResult{call.Result("")}})
			resp, err := newModel(t, p, s).Generate(context.Background(), req)
			mustOK(t, resp, err)
			if d := cmp.Diff(req.Messages, onlyRequest(t, s).Messages); d != "" {
				t.Errorf("messages (-sent +recorded):\n%s", d)
			}
		})
	}
}

// A model's arguments that are not JSON come back as a JSON string, Decode
// says so, and the error result goes back without the provider refusing the
// conversation.
func TestToolInvalidArguments(t *testing.T) {
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(p.name+streamName(stream), func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, llmtest.Sequence(
					llmtest.CallTools(llmtest.Call("read_file", `{"path": "a.md`)), // cut short
					llmtest.Text("sorry"),
				))
				m := newModel(t, p, s)
				req := toolRequest(stream)
				resp, err := m.Generate(context.Background(), req)
				mustOK(t, resp, err)
				if len(resp.ToolCalls) != 1 || !json.Valid(resp.ToolCalls[0].Input) {
					t.Fatalf("tool calls %+v", resp.ToolCalls)
				}
				var in struct{ Path string }
				err = resp.ToolCalls[0].Decode(&in)
				if !errors.Is(err, llm.ErrBadToolInput) || !strings.Contains(err.Error(), "not valid JSON") ||
					!strings.Contains(err.Error(), `{"path": "a.md`) {
					t.Fatalf("Decode error %v", err)
				}
				req.Messages = llm.AppendToolRound(req.Messages, resp, resp.ToolCalls[0].ErrorResult(err.Error()))
				resp, err = m.Generate(context.Background(), req)
				mustOK(t, resp, err)
				got := s.Requests()[1].ToolCalls()[0]
				// OpenAI gets the model's own text back; Anthropic, which
				// accepts only an object, gets {}.
				want := map[llmtest.Protocol]string{llmtest.OpenAI: `"{\"path\": \"a.md"`, llmtest.Anthropic: `{}`}[p.protocol]
				if string(got.Input) != want {
					t.Errorf("call sent back with input %s, want %s", got.Input, want)
				}
			})
		}
	}
}

// A conversation the providers would refuse never leaves the process.
func TestToolRequestValidation(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "search", Input: json.RawMessage(`{}`)}
	cases := []struct {
		name   string
		change func(r *llm.Request)
		want   string
	}{
		{"result answers no call", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.ResultsMessage(llm.ToolResult{CallID: "c9", Content: "x"}))
		}, `result for call "c9"`},
		{"call without a result", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
				llm.Message{Role: llm.RoleUser, Content: "go on"})
		}, `calls "c1" of the turn before have no result`},
		{"named choice of an undefined tool", func(r *llm.Request) { r.ToolChoice = llm.ToolNamed("write_file") }, `"write_file"`},
		{"duplicate tool", func(r *llm.Request) { r.Tools = append(r.Tools, search) }, "defined twice"},
	}
	for _, p := range providers {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
				req := toolRequest(false)
				c.change(req)
				_, err := newModel(t, p, s).Generate(context.Background(), req)
				if !errors.Is(err, llm.ErrInvalidTools) || !strings.Contains(err.Error(), c.want) ||
					!strings.HasPrefix(err.Error(), p.name+": ") {
					t.Errorf("error %v, want one wrapping llm.ErrInvalidTools mentioning %s", err, c.want)
				}
				if s.Count() != 0 {
					t.Error("an invalid request reached the server")
				}
			})
		}
	}
}

func TestToolReplyUsage(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			reply := llmtest.Reply{Text: "Reading.", ToolCalls: []llm.ToolCall{llmtest.Call("read_file", `{"path":"a.md"}`)}}
			s := llmtest.NewServer(t, llmtest.Always(reply))
			resp, err := newModel(t, p, s).Generate(context.Background(), toolRequest(false))
			mustOK(t, resp, err)
			out := llm.Message{Role: llm.RoleAssistant, Content: reply.Text, ToolCalls: reply.ToolCalls}
			want := llm.Usage{InputTokens: int64(countPrompt(s.Requests()[0])), OutputTokens: int64(tokens.Count(out.PromptText()))}
			if resp.Usage != want || s.TotalUsage() != want {
				t.Errorf("usage %+v, server %+v, want %+v", resp.Usage, s.TotalUsage(), want)
			}
		})
	}
}

// countPrompt is the fake's documented count: system, each message's
// PromptText, each tool's PromptText.
func countPrompt(r llmtest.RecordedRequest) int {
	n := countText(r)
	for _, tool := range r.Tools {
		n += tokens.Count(tool.PromptText())
	}
	for _, m := range r.Messages {
		n += tokens.Count(m.PromptText()) - tokens.Count(m.Content)
	}
	return n
}

// countText counts the system prompt and message texts alone.
func countText(r llmtest.RecordedRequest) int {
	n := tokens.Count(r.System)
	for _, m := range r.Messages {
		n += tokens.Count(m.Content)
	}
	return n
}

func streamName(stream bool) string {
	if stream {
		return "/stream"
	}
	return ""
}
