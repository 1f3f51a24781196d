package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-dev/baton/internal/textclip"
)

// Tool is a function the model may call. Providers send it through their
// native tool calling (Anthropic tools with input_schema, OpenAI function
// tools with parameters).
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the input object. Nil means a tool that
	// takes no input ({"type":"object","properties":{}}).
	Schema map[string]any `json:"schema,omitempty"`
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	// ID pairs the call with its ToolResult; the provider chose it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Input is the call's arguments as raw JSON, normally an object. When a
	// provider sent arguments that are not valid JSON (a model's slip, or a
	// stream cut short by max_tokens), Input is those arguments as a JSON
	// string value instead, so that Input is always valid JSON and the
	// caller can report the slip to the model; Decode does that.
	Input json.RawMessage `json:"input"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	// IsError marks a failed call. Anthropic carries it as is_error;
	// OpenAI has no such field, so its adapter prefixes Content with
	// ErrorPrefix instead.
	IsError bool `json:"is_error,omitempty"`
}

// ErrorPrefix starts the content of a failed tool result on providers whose
// wire format has no error flag (OpenAI), so that the model still sees that
// the call failed.
const ErrorPrefix = "Error: "

// ToolChoice says how the model must use the tools of a request.
type ToolChoice string

const (
	// ToolChoiceAuto lets the model decide; it is what an empty ToolChoice
	// means to every provider.
	ToolChoiceAuto ToolChoice = "auto"
	// ToolChoiceAny makes the model call at least one tool (Anthropic
	// "any", OpenAI "required"; "required" is accepted as a synonym).
	ToolChoiceAny ToolChoice = "any"
	// ToolChoiceNone forbids tool calls while the tools stay defined, e.g.
	// to ask for a final answer.
	ToolChoiceNone ToolChoice = "none"
)

// ToolNamed makes the model call the named tool.
func ToolNamed(name string) ToolChoice { return ToolChoice(name) }

// Tool is the tool the choice names, or "" for auto, any and none.
func (c ToolChoice) Tool() string {
	switch c {
	case "", ToolChoiceAuto, ToolChoiceAny, "required", ToolChoiceNone:
		return ""
	}
	return string(c)
}

// Mode is the choice without its tool name: "" (provider default), "auto",
// "any", "none" or "tool".
func (c ToolChoice) Mode() string {
	switch c {
	case "", ToolChoiceAuto, ToolChoiceNone:
		return string(c)
	case ToolChoiceAny, "required":
		return string(ToolChoiceAny)
	}
	return "tool"
}

// WantsTools reports whether the model asked for tools to run: the agent
// loop's signal to run them and send the results back. A response cut short
// by max_tokens may carry calls whose Input is incomplete (see ToolCall).
func (r *Response) WantsTools() bool { return r != nil && len(r.ToolCalls) > 0 }

// AssistantMessage is the assistant turn of r, to append to the conversation
// before the results of its calls.
func (r *Response) AssistantMessage() Message {
	return Message{Role: RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls}
}

// ResultsMessage is the user turn answering tool calls.
func ResultsMessage(results ...ToolResult) Message {
	return Message{Role: RoleUser, ToolResults: results}
}

// AppendToolRound appends the assistant turn of resp and, when there are
// results, the turn answering its calls: one round of the agent loop.
//
//	for {
//		resp, err := m.Generate(ctx, req)
//		...
//		if !resp.WantsTools() {
//			break
//		}
//		var results []llm.ToolResult
//		for _, c := range resp.ToolCalls {
//			results = append(results, run(c))
//		}
//		req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
//	}
func AppendToolRound(msgs []Message, resp *Response, results ...ToolResult) []Message {
	msgs = append(msgs, resp.AssistantMessage())
	if len(results) > 0 {
		msgs = append(msgs, ResultsMessage(results...))
	}
	return msgs
}

// Result is a successful result of c.
func (c ToolCall) Result(content string) ToolResult {
	return ToolResult{CallID: c.ID, Content: content}
}

// ErrorResult is a failed result of c; msg tells the model what went wrong.
func (c ToolCall) ErrorResult(msg string) ToolResult {
	return ToolResult{CallID: c.ID, Content: msg, IsError: true}
}

// ErrBadToolInput is returned by Decode when a call's input cannot be used;
// the message is meant to go back to the model as an error result.
var ErrBadToolInput = errors.New("bad tool input")

// Decode unmarshals c's input into v, which is normally a pointer to a
// struct. The error says plainly what was wrong, for the model to read.
func (c ToolCall) Decode(v any) error {
	in := bytes.TrimSpace(c.Input)
	if len(in) == 0 {
		in = []byte("{}")
	}
	if in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return fmt.Errorf("%w: tool %s: the arguments are not valid JSON: %s", ErrBadToolInput, c.Name, textclip.Runes(s, 200))
		}
	}
	if err := json.Unmarshal(in, v); err != nil {
		return fmt.Errorf("%w: tool %s: %v", ErrBadToolInput, c.Name, err)
	}
	return nil
}

// InputJSON is c's input, or {} when it is empty: what providers are sent.
func (c ToolCall) InputJSON() json.RawMessage {
	if len(bytes.TrimSpace(c.Input)) == 0 {
		return json.RawMessage("{}")
	}
	return c.Input
}

// ToolInput turns arguments as a provider sent them into ToolCall.Input:
// the arguments themselves when they are valid JSON, {} when empty, and
// otherwise the arguments as a JSON string value.
func ToolInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args) // a string always marshals
	return b
}

// SchemaJSON is t's input schema, with the empty-object default when Schema
// is nil.
func (t Tool) SchemaJSON() (json.RawMessage, error) {
	if t.Schema == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	b, err := json.Marshal(t.Schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", t.Name, err)
	}
	return b, nil
}

// PromptText is the text a tool definition puts into the prompt (name,
// description, schema), for counting tokens.
func (t Tool) PromptText() string {
	schema, _ := t.SchemaJSON()
	return t.Name + "\n" + t.Description + "\n" + string(schema)
}

// PromptText is all the text a message puts into the prompt: its content,
// each tool call's name and input, each result's content. It is Content
// alone for a message without tools, so token counts of plain conversations
// are unchanged.
func (m Message) PromptText() string {
	if len(m.ToolCalls) == 0 && len(m.ToolResults) == 0 {
		return m.Content
	}
	parts := []string{}
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, c.Name+" "+string(c.InputJSON()))
	}
	for _, r := range m.ToolResults {
		parts = append(parts, r.Content)
	}
	return strings.Join(parts, "\n")
}

// ErrInvalidTools is wrapped by Request.ValidateTools errors: the request
// would be refused by the provider, so it is not sent.
var ErrInvalidTools = errors.New("invalid tool use")

// toolName is the name pattern both Anthropic and OpenAI accept.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidateTools checks the rules every provider enforces on tools, so that a
// broken agent loop fails here with a clear message rather than as an HTTP
// 400 it paid a round trip for: tool names are valid and unique; a named
// ToolChoice names a defined tool; tool calls appear only in assistant
// turns and results only in user turns; the turn after an assistant turn
// with calls answers every call exactly once, and results answer only the
// calls of the turn just before. Adapters call it before sending.
func (r *Request) ValidateTools() error {
	names := map[string]bool{}
	for i, t := range r.Tools {
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("%w: tools[%d]: name %q must be 1-64 letters, digits, _ or -", ErrInvalidTools, i, t.Name)
		}
		if names[t.Name] {
			return fmt.Errorf("%w: tools[%d]: name %q is defined twice", ErrInvalidTools, i, t.Name)
		}
		names[t.Name] = true
		if _, err := t.SchemaJSON(); err != nil {
			return fmt.Errorf("%w: tools[%d]: %v", ErrInvalidTools, i, err)
		}
	}
	switch r.ToolChoice.Mode() {
	case "any":
		if len(r.Tools) == 0 {
			return fmt.Errorf("%w: tool choice %q with no tools defined", ErrInvalidTools, r.ToolChoice)
		}
	case "tool":
		if !names[r.ToolChoice.Tool()] {
			return fmt.Errorf("%w: tool choice names %q, which is not a defined tool", ErrInvalidTools, r.ToolChoice.Tool())
		}
	}
	var open map[string]bool // calls of the previous assistant turn awaiting results
	for i, m := range r.Messages {
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return fmt.Errorf("%w: message %d: only assistant turns carry tool calls", ErrInvalidTools, i)
		}
		if len(m.ToolResults) > 0 && m.Role != RoleUser {
			return fmt.Errorf("%w: message %d: only user turns carry tool results", ErrInvalidTools, i)
		}
		for _, res := range m.ToolResults {
			if !open[res.CallID] {
				return fmt.Errorf("%w: message %d: result for call %q answers no open call of the turn before", ErrInvalidTools, i, res.CallID)
			}
			delete(open, res.CallID)
		}
		if len(open) > 0 {
			return fmt.Errorf("%w: message %d: calls %s of the turn before have no result", ErrInvalidTools, i, keys(open))
		}
		open = nil
		for j, c := range m.ToolCalls {
			if c.ID == "" || c.Name == "" {
				return fmt.Errorf("%w: message %d: tool call %d needs an id and a name", ErrInvalidTools, i, j)
			}
			if len(c.Input) > 0 && !json.Valid(c.Input) {
				return fmt.Errorf("%w: message %d: tool call %q: input is not valid JSON", ErrInvalidTools, i, c.ID)
			}
			if open == nil {
				open = map[string]bool{}
			}
			if open[c.ID] {
				return fmt.Errorf("%w: message %d: tool call id %q is used twice", ErrInvalidTools, i, c.ID)
			}
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("%w: the last turn calls tools %s but no results follow", ErrInvalidTools, keys(open))
	}
	return nil
}

func keys(m map[string]bool) string {
	// Sorted so that the same mistake gives the same message.
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, strconv.Quote(k))
	}
	return strings.Join(out, ", ")
}
