package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

// RecordedRequest is one model request as the server understood it.
type RecordedRequest struct {
	Protocol Protocol
	Path     string
	Model    string
	// System is the system prompt: Anthropic's system string or text blocks
	// joined with "\n", or OpenAI's system and developer messages joined
	// with "\n".
	System string
	// SystemCacheControl is true when an Anthropic system block carried
	// cache_control.
	SystemCacheControl bool
	// Messages are the conversation turns other than the system prompt, with
	// text content blocks joined.
	//
	// Tool use is recorded in llm's terms, the same for both protocols: an
	// assistant turn's tool_use blocks or tool_calls become its ToolCalls
	// (Input compacted JSON; OpenAI arguments that are not JSON become a JSON
	// string), and tool_result blocks become the user turn's ToolResults.
	// For OpenAI, consecutive tool-role messages become one user turn with
	// ToolResults, and a user message right after them becomes that turn's
	// Content: the shape Anthropic carries in one message. OpenAI has no
	// error flag, so its results have IsError false and the content the
	// adapter sent (llm.ErrorPrefix and the message, for a failed call).
	Messages    []llm.Message
	Temperature *float64
	// MaxTokens is max_tokens (Anthropic) or max_completion_tokens, falling
	// back to max_tokens (OpenAI); 0 when absent.
	MaxTokens int
	Stream    bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
	// ResponseFormat is OpenAI's response_format or Anthropic's
	// output_config.format, raw; nil when absent.
	ResponseFormat json.RawMessage
	// Tools are the tool definitions sent, in order: Anthropic's
	// input_schema or OpenAI's function parameters as Schema.
	Tools []llm.Tool
	// ToolChoice is the provider's own word for tool_choice ("auto", "any",
	// "none", "tool" for Anthropic; "auto", "none", "required", "function"
	// for OpenAI); "" when absent. ToolChoiceName is the tool it names.
	ToolChoice     string
	ToolChoiceName string
	Header         http.Header
	Body           []byte
	// NumCtx is Ollama's options.num_ctx, the window the request asked the
	// server to run with; 0 when absent. Truncated is true when the
	// request did not fit the window Ollama ran it with (NumCtx, or
	// OllamaDefaultContext without one): the real server would have
	// silently dropped the start of the prompt.
	NumCtx    int
	Truncated bool

	// Status is the status the server answered with (499 when the client
	// went away during a delay).
	Status int
	// Usage is what the server reported, normalised as in llm.Usage; zero
	// for errors and garbage.
	Usage llm.Usage

	seq int
}

// APIKey is the credential the request carried: x-api-key, or the bearer
// token of Authorization.
func (r RecordedRequest) APIKey() string {
	if k := r.Header.Get("x-api-key"); k != "" {
		return k
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return strings.TrimPrefix(a, "Bearer ")
	}
	return ""
}

// SchemaName is the JSON schema's name for OpenAI requests that asked for one.
func (r RecordedRequest) SchemaName() string {
	var rf struct {
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(r.ResponseFormat, &rf) != nil {
		return ""
	}
	return rf.JSONSchema.Name
}

// ToolNames are the names of the tools defined, in order.
func (r RecordedRequest) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// ToolResults are every tool result sent, in conversation order.
func (r RecordedRequest) ToolResults() []llm.ToolResult {
	var out []llm.ToolResult
	for _, m := range r.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// ToolCalls are every tool call the assistant turns sent back carry, in
// conversation order.
func (r RecordedRequest) ToolCalls() []llm.ToolCall {
	var out []llm.ToolCall
	for _, m := range r.Messages {
		out = append(out, m.ToolCalls...)
	}
	return out
}

func (r RecordedRequest) clone() RecordedRequest {
	r.Messages = append([]llm.Message(nil), r.Messages...)
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.ToolCalls != nil {
			m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
			for j := range m.ToolCalls {
				m.ToolCalls[j].Input = bytes.Clone(m.ToolCalls[j].Input)
			}
		}
		if m.ToolResults != nil {
			m.ToolResults = append([]llm.ToolResult(nil), m.ToolResults...)
		}
	}
	if r.Tools != nil {
		// Schemas are shared: they are decoded afresh per request and
		// nothing in the server writes to them.
		r.Tools = append([]llm.Tool(nil), r.Tools...)
	}
	r.Header = r.Header.Clone()
	r.Body = bytes.Clone(r.Body)
	r.ResponseFormat = bytes.Clone(r.ResponseFormat)
	if r.Temperature != nil {
		t := *r.Temperature
		r.Temperature = &t
	}
	return r
}

// describe names the request in an error message, so that a test that
// forgot a rule says which request was unexpected.
func (r RecordedRequest) describe() string {
	last := ""
	if n := len(r.Messages); n > 0 {
		last = r.Messages[n-1].PromptText()
	}
	return fmt.Sprintf("%s request #%d (model %q, system %q, last message %q)",
		r.Protocol, r.seq, r.Model, textclip.Runes(r.System, 60), textclip.Runes(last, 60))
}

// wireRequest is the union of the fields baton reads from both protocols.
type wireRequest struct {
	Model         string          `json:"model"`
	System        json.RawMessage `json:"system"`
	Messages      []wireMessage   `json:"messages"`
	Temperature   *float64        `json:"temperature"`
	MaxTokens     *int            `json:"max_tokens"`
	MaxCompletion *int            `json:"max_completion_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat json.RawMessage `json:"response_format"`
	OutputConfig   *struct {
		Format json.RawMessage `json:"format"`
	} `json:"output_config"`
	Tools      []wireTool      `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// OpenAI: an assistant turn's calls, and the call a tool message answers.
	ToolCalls  []wireToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// wireTool is a tool definition of either protocol.
type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Function    *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

const maxBody = 64 << 20

func parseRequest(r *http.Request, p Protocol) (RecordedRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return RecordedRequest{}, fmt.Errorf("llmtest: reading request body: %w", err)
	}
	rec := RecordedRequest{Protocol: p, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if p == Ollama {
		return rec, decodeOllama(&rec, body)
	}
	return rec, decode(&rec, body)
}

// decode fills rec from a request body. It is strict where the real services
// are (a missing model or messages is a 400), so adapter bugs show up here
// rather than in production.
func decode(rec *RecordedRequest, body []byte) error {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return fmt.Errorf("llmtest: request body is not valid JSON: %v", err)
	}
	if w.Model == "" {
		return errors.New("llmtest: model: field required")
	}
	if len(w.Messages) == 0 {
		return errors.New("llmtest: messages: at least one message is required")
	}
	rec.Model = w.Model
	rec.Temperature = w.Temperature
	rec.Stream = w.Stream
	rec.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage

	var system []string
	switch rec.Protocol {
	case Anthropic:
		if w.MaxTokens == nil {
			return errors.New("llmtest: max_tokens: field required")
		}
		rec.MaxTokens = *w.MaxTokens
		if w.OutputConfig != nil && len(w.OutputConfig.Format) > 0 {
			rec.ResponseFormat = w.OutputConfig.Format
		}
		if len(w.System) > 0 && string(w.System) != "null" {
			text, cached, err := content(w.System)
			if err != nil {
				return fmt.Errorf("llmtest: system: %w", err)
			}
			system = append(system, text)
			rec.SystemCacheControl = cached
		}
	case OpenAI:
		switch {
		case w.MaxCompletion != nil:
			rec.MaxTokens = *w.MaxCompletion
		case w.MaxTokens != nil:
			rec.MaxTokens = *w.MaxTokens
		}
		if len(w.ResponseFormat) > 0 && string(w.ResponseFormat) != "null" {
			rec.ResponseFormat = w.ResponseFormat
		}
	}
	if err := decodeTools(rec, w); err != nil {
		return err
	}
	// afterTools is true while the last message recorded is the fold of
	// OpenAI tool messages, which a following user message joins.
	afterTools := false
	for i, m := range w.Messages {
		if rec.Protocol == OpenAI && m.Role == "tool" {
			if m.ToolCallID == "" {
				return fmt.Errorf("llmtest: messages[%d].tool_call_id: field required", i)
			}
			text, _, err := content(m.Content)
			if err != nil {
				return fmt.Errorf("llmtest: messages[%d].content: %w", i, err)
			}
			res := llm.ToolResult{CallID: m.ToolCallID, Content: text}
			if afterTools {
				last := &rec.Messages[len(rec.Messages)-1]
				last.ToolResults = append(last.ToolResults, res)
			} else {
				rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{res}})
			}
			afterTools = true
			continue
		}
		text, _, err := content(m.Content)
		if err != nil {
			return fmt.Errorf("llmtest: messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "user", "assistant":
			msg := llm.Message{Role: llm.Role(m.Role), Content: text}
			switch rec.Protocol {
			case Anthropic:
				msg.ToolCalls, msg.ToolResults, err = anthropicTools(m)
			case OpenAI:
				msg.ToolCalls, err = openAIToolCalls(m)
			}
			if err != nil {
				return fmt.Errorf("llmtest: messages[%d]: %w", i, err)
			}
			if afterTools && m.Role == "user" {
				rec.Messages[len(rec.Messages)-1].Content = text
			} else {
				rec.Messages = append(rec.Messages, msg)
			}
		case "system", "developer":
			// Anthropic takes a system message inside the conversation
			// (Claude Code sends its environment notes so) but not as
			// the opening message, nor a developer one.
			if rec.Protocol == Anthropic && (m.Role != "system" || i == 0) {
				return fmt.Errorf("llmtest: messages[%d].role: %q is not allowed; use the top-level system parameter", i, m.Role)
			}
			system = append(system, text)
		default:
			return fmt.Errorf("llmtest: messages[%d].role: unknown role %q", i, m.Role)
		}
		afterTools = false
	}
	rec.System = strings.Join(system, "\n")
	return checkToolUse(rec)
}

// decodeTools reads the tool definitions and tool_choice, as strictly as the
// services check them.
func decodeTools(rec *RecordedRequest, w wireRequest) error {
	for i, t := range w.Tools {
		var tool llm.Tool
		var schema json.RawMessage
		switch rec.Protocol {
		case Anthropic:
			tool = llm.Tool{Name: t.Name, Description: t.Description}
			schema = t.InputSchema
			if len(schema) == 0 {
				return fmt.Errorf("llmtest: tools.%d.input_schema: field required", i)
			}
		case OpenAI:
			if t.Type != "function" || t.Function == nil {
				return fmt.Errorf("llmtest: tools[%d]: type must be \"function\" with a function object", i)
			}
			tool = llm.Tool{Name: t.Function.Name, Description: t.Function.Description}
			schema = t.Function.Parameters
		}
		if tool.Name == "" {
			return fmt.Errorf("llmtest: tools[%d].name: field required", i)
		}
		if len(schema) > 0 && string(schema) != "null" {
			if err := json.Unmarshal(schema, &tool.Schema); err != nil {
				return fmt.Errorf("llmtest: tools[%d]: the schema is not an object", i)
			}
			if rec.Protocol == Anthropic && tool.Schema["type"] != "object" {
				return fmt.Errorf("llmtest: tools.%d.input_schema.type: must be \"object\"", i)
			}
		}
		rec.Tools = append(rec.Tools, tool)
	}
	if len(w.ToolChoice) == 0 || string(w.ToolChoice) == "null" {
		return nil
	}
	var word string
	if json.Unmarshal(w.ToolChoice, &word) == nil {
		rec.ToolChoice = word
	} else {
		var c struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(w.ToolChoice, &c); err != nil {
			return errors.New("llmtest: tool_choice: must be a string or an object")
		}
		rec.ToolChoice, rec.ToolChoiceName = c.Type, c.Name
		if rec.Protocol == OpenAI {
			rec.ToolChoiceName = c.Function.Name
		}
	}
	valid := map[Protocol][]string{Anthropic: {"auto", "any", "none", "tool"}, OpenAI: {"auto", "none", "required", "function"}}
	if !slices.Contains(valid[rec.Protocol], rec.ToolChoice) {
		return fmt.Errorf("llmtest: tool_choice: unknown choice %q", rec.ToolChoice)
	}
	return nil
}

// anthropicTools reads the tool_use and tool_result blocks of a message.
func anthropicTools(m wireMessage) ([]llm.ToolCall, []llm.ToolResult, error) {
	var blocks []wireBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil, nil, nil // a plain string
	}
	var calls []llm.ToolCall
	var results []llm.ToolResult
	for j, b := range blocks {
		switch b.Type {
		case "tool_use":
			if m.Role != "assistant" {
				return nil, nil, fmt.Errorf("content.%d: tool_use blocks belong in assistant turns", j)
			}
			if b.ID == "" || b.Name == "" || !isObject(b.Input) {
				return nil, nil, fmt.Errorf("content.%d: tool_use needs an id, a name and an object input", j)
			}
			calls = append(calls, llm.ToolCall{ID: b.ID, Name: b.Name, Input: compact(b.Input)})
		case "tool_result":
			if m.Role != "user" {
				return nil, nil, fmt.Errorf("content.%d: tool_result blocks belong in user turns", j)
			}
			if b.ToolUseID == "" {
				return nil, nil, fmt.Errorf("content.%d.tool_use_id: field required", j)
			}
			if len(results) != j {
				// The API requires tool results before any other block.
				return nil, nil, fmt.Errorf("content.%d: tool_result blocks must come first in the message", j)
			}
			text := ""
			if len(b.Content) > 0 && string(b.Content) != "null" {
				var err error
				if text, _, err = content(b.Content); err != nil {
					return nil, nil, fmt.Errorf("content.%d.content: %w", j, err)
				}
			}
			results = append(results, llm.ToolResult{CallID: b.ToolUseID, Content: text, IsError: b.IsError})
		}
	}
	return calls, results, nil
}

// openAIToolCalls reads an assistant message's tool_calls.
func openAIToolCalls(m wireMessage) ([]llm.ToolCall, error) {
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return nil, errors.New("tool_calls belong in assistant messages")
	}
	var calls []llm.ToolCall
	for j, c := range m.ToolCalls {
		if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
			return nil, fmt.Errorf("tool_calls[%d]: needs an id, type \"function\" and a function name", j)
		}
		calls = append(calls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Input: compact(llm.ToolInput(c.Function.Arguments))})
	}
	return calls, nil
}

// checkToolUse applies the pairing rules both services enforce, and
// Anthropic's rule that a conversation holding tool blocks must define
// tools.
func checkToolUse(rec *RecordedRequest) error {
	used := false
	for _, m := range rec.Messages {
		used = used || len(m.ToolCalls) > 0 || len(m.ToolResults) > 0
	}
	if used && rec.Protocol == Anthropic && len(rec.Tools) == 0 {
		return errors.New("llmtest: requests which include tool_use or tool_result blocks must define tools")
	}
	req := llm.Request{Tools: rec.Tools, Messages: rec.Messages}
	if err := req.ValidateTools(); err != nil {
		return fmt.Errorf("llmtest: %w", err)
	}
	if rec.ToolChoiceName != "" && !slices.Contains(rec.ToolNames(), rec.ToolChoiceName) {
		return fmt.Errorf("llmtest: tool_choice names %q, which is not a defined tool", rec.ToolChoiceName)
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// compact makes recorded inputs comparable whatever whitespace the SDK used.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// content reads a string or an array of text blocks, reporting whether any
// block carried cache_control. Absent or null content (an OpenAI assistant
// turn that only called tools) is empty text.
func content(raw json.RawMessage) (string, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, false, nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", false, errors.New("must be a string or an array of content blocks")
	}
	var parts []string
	cached := false
	for _, b := range blocks {
		if b.Type != "text" {
			continue
		}
		parts = append(parts, b.Text)
		if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
			cached = true
		}
	}
	return strings.Join(parts, "\n"), cached, nil
}

// promptTokens counts everything the model was sent, the way baton's own
// accounting counts it: tokens.Count of the system prompt, plus of each
// message's llm.Message.PromptText (its content, tool calls and tool
// results), plus of each tool definition's llm.Tool.PromptText (name,
// description and schema). A conversation without tools counts as before.
func promptTokens(rec RecordedRequest) int {
	n := tokens.Count(rec.System)
	for _, m := range rec.Messages {
		n += tokens.Count(m.PromptText())
	}
	for _, t := range rec.Tools {
		n += tokens.Count(t.PromptText())
	}
	return n
}

// computeUsage is the usage to report: the reply's own or a real count. The
// output side is tokens.Count of the assistant turn's PromptText: Text alone
// without tool calls, and each call's name and input with them.
func computeUsage(reply Reply, prompt int) llm.Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	out := llm.Message{Role: llm.RoleAssistant, Content: reply.Text, ToolCalls: reply.ToolCalls}
	return llm.Usage{InputTokens: int64(prompt), OutputTokens: int64(tokens.Count(out.PromptText()))}
}
