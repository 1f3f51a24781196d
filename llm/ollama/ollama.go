// Package ollama implements llm.Model on Ollama's native chat API
// (POST /api/chat), so that every request carries the context window the
// server must use (options.num_ctx).
//
// Ollama's OpenAI-compatible endpoint (/v1/chat/completions) has no way to
// set the window: it runs every request at the server's default (2048 or
// 4096 tokens, or whatever OLLAMA_CONTEXT_LENGTH says) and silently drops
// what does not fit, so a prompt baton checked against a 32k window would be
// cut to its last 4k tokens without a word. The native API reads num_ctx
// from each request's options. baton sends the same value on every request
// of a run, because a change of num_ctx makes Ollama load the model again.
//
// Like the other provider packages it is thin: request in, usage as the
// server reported it (prompt_eval_count, eval_count) out, every failure an
// *llm.ProviderError that the retry policy can judge. It reads nothing from
// the environment.
package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/llm"
)

// ProviderName is the name carried by this package's errors.
const ProviderName = "ollama"

// ErrNoModel is returned when neither the Config nor the request names a model.
var ErrNoModel = errors.New("ollama: no model named")

// maxLine bounds one line of a streamed reply (and a whole JSON reply): a
// line holds one delta, a reply the whole answer.
const maxLine = 64 << 20

// Config configures a Model.
type Config struct {
	// BaseURL is the server's root, without /api or /v1
	// (http://127.0.0.1:11434).
	BaseURL string
	// Model is used when a request names none.
	Model string
	// NumCtx is sent as options.num_ctx on every request: the context
	// window the server runs the model with. 0 leaves it to the server.
	NumCtx int
	// HTTPClient is used for every call; nil means llm.NewHTTPClient with
	// the default timeouts.
	HTTPClient *http.Client
}

// Model is an llm.Model speaking Ollama's /api/chat. It is safe for
// concurrent use.
type Model struct {
	cfg Config
	hc  *http.Client
	// calls numbers tool calls, which Ollama sends without an ID, so that
	// every call of a conversation has an ID of its own.
	calls atomic.Int64
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("ollama: base URL %q: must start with http:// or https://", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient(llm.DefaultCallTimeout, llm.DefaultIdleTimeout)
	}
	return &Model{cfg: cfg, hc: hc}, nil
}

// The wire types follow Ollama's API documentation (docs/api.md).

type chatRequest struct {
	Model    string          `json:"model"`
	Messages []chatMessage   `json:"messages"`
	Stream   bool            `json:"stream"`
	Format   json.RawMessage `json:"format,omitempty"`
	Tools    []chatTool      `json:"tools,omitempty"`
	Options  map[string]any  `json:"options,omitempty"`
}

type chatMessage struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	ToolCalls []chatCall `json:"tool_calls,omitempty"`
	ToolName  string     `json:"tool_name,omitempty"`
}

type chatCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// chatResponse is a whole reply, or one line of a streamed one: the last
// line has done true and the counts.
type chatResponse struct {
	Model           string      `json:"model"`
	Message         chatMessage `json:"message"`
	Done            bool        `json:"done"`
	DoneReason      string      `json:"done_reason"`
	PromptEvalCount int64       `json:"prompt_eval_count"`
	EvalCount       int64       `json:"eval_count"`
	Error           string      `json:"error"`
}

func (m *Model) body(req *llm.Request) (chatRequest, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	if model == "" {
		return chatRequest{}, ErrNoModel
	}
	if err := req.ValidateTools(); err != nil {
		return chatRequest{}, fmt.Errorf("ollama: %w", err)
	}
	b := chatRequest{Model: model, Stream: req.Stream || req.OnText != nil, Options: map[string]any{}}
	if m.cfg.NumCtx > 0 {
		b.Options["num_ctx"] = m.cfg.NumCtx
	}
	if req.Temperature != nil {
		b.Options["temperature"] = *req.Temperature
	}
	if req.MaxTokens > 0 {
		b.Options["num_predict"] = req.MaxTokens
	}
	if req.System != "" {
		b.Messages = append(b.Messages, chatMessage{Role: "system", Content: req.System})
	}
	names := map[string]string{} // tool call ID to tool name, for results
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			for _, r := range msg.ToolResults {
				content := r.Content
				if r.IsError {
					// The API has no error flag; without a marker the
					// model would take a failure for data.
					content = llm.ErrorPrefix + content
				}
				b.Messages = append(b.Messages, chatMessage{Role: "tool", Content: content, ToolName: names[r.CallID]})
			}
			if len(msg.ToolResults) == 0 || msg.Content != "" {
				b.Messages = append(b.Messages, chatMessage{Role: "user", Content: msg.Content})
			}
		case llm.RoleAssistant:
			a := chatMessage{Role: "assistant", Content: msg.Content}
			for _, c := range msg.ToolCalls {
				names[c.ID] = c.Name
				var cc chatCall
				cc.Function.Name, cc.Function.Arguments = c.Name, objectInput(c)
				a.ToolCalls = append(a.ToolCalls, cc)
			}
			b.Messages = append(b.Messages, a)
		default:
			return b, fmt.Errorf("ollama: message %d: unknown role %q", i, msg.Role)
		}
	}
	if req.ToolChoice.Mode() != "none" {
		// Ollama has no tool_choice: "none" is honoured by sending no
		// tools, "any" and a named tool cannot be enforced.
		for _, t := range req.Tools {
			var ct chatTool
			ct.Type = "function"
			ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, t.Schema
			if ct.Function.Parameters == nil {
				ct.Function.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			b.Tools = append(b.Tools, ct)
		}
	}
	if req.JSONSchema != nil && req.JSONSchema.Schema != nil {
		raw, err := req.JSONSchema.MarshalSchema()
		if err != nil {
			return b, fmt.Errorf("ollama: JSON schema: %w", err)
		}
		b.Format = raw
	}
	return b, nil
}

// objectInput is a call's input as the object the API takes; input that is
// not one (arguments cut short) goes back as {}, as package anthropic does.
func objectInput(c llm.ToolCall) json.RawMessage {
	in := c.InputJSON()
	var obj map[string]json.RawMessage
	if json.Unmarshal(in, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return in
}

// Generate sends req and returns the whole response.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("ollama: nil request")
	}
	b, err := m.body(req)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("ollama: encoding the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.cfg.BaseURL+"/api/chat", bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := m.hc.Do(hreq)
	if err != nil {
		return nil, m.transport(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp)
	}
	var out *llm.Response
	if b.Stream {
		out, err = m.stream(resp.Body, req.OnText)
	} else {
		out, err = m.whole(resp.Body)
	}
	if err != nil {
		var pe *llm.ProviderError
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, m.transport(ctx, err)
	}
	return out, nil
}

func (m *Model) whole(body io.Reader) (*llm.Response, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxLine))
	if err != nil {
		return nil, err
	}
	var c chatResponse
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, invalid("the body could not be decoded: " + err.Error())
	}
	if c.Error != "" {
		return nil, &llm.ProviderError{Provider: ProviderName, StatusCode: http.StatusInternalServerError, Type: "api_error", Message: c.Error}
	}
	return m.response(c, c.Message.Content, c.Message.ToolCalls)
}

// stream reads the newline-delimited JSON of a streamed reply; onText, when
// set, gets every piece of content as it arrives.
func (m *Model) stream(body io.Reader, onText func(string)) (*llm.Response, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var (
		text  strings.Builder
		calls []chatCall
		last  chatResponse
		lines int
		done  bool
	)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c chatResponse
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, invalid(fmt.Sprintf("line %d of the stream could not be decoded: %v", lines+1, err))
		}
		lines++
		if c.Error != "" {
			// An error after the stream began: the server gave up on
			// this answer (a crashed runner, say); another try may work.
			return nil, &llm.ProviderError{Provider: ProviderName, Type: "stream_error", Message: c.Error}
		}
		text.WriteString(c.Message.Content)
		if onText != nil && c.Message.Content != "" {
			onText(c.Message.Content)
		}
		calls = append(calls, c.Message.ToolCalls...)
		if c.Done {
			last, done = c, true
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done {
		// A body that ends cleanly before done is a stream cut short:
		// what arrived may be half an answer.
		return nil, llm.Incomplete(ProviderName, fmt.Sprintf("the stream ended before done (after %d lines)", lines))
	}
	return m.response(last, text.String(), calls)
}

func (m *Model) response(c chatResponse, text string, calls []chatCall) (*llm.Response, error) {
	out := &llm.Response{Model: c.Model, Text: text, StopReason: c.DoneReason,
		Usage: llm.Usage{InputTokens: c.PromptEvalCount, OutputTokens: c.EvalCount}}
	for _, cc := range calls {
		id := cc.ID
		if id == "" {
			id = fmt.Sprintf("call_ollama_%d", m.calls.Add(1))
		}
		args := cc.Function.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: id, Name: cc.Function.Name, Input: llm.ToolInput(string(args))})
	}
	if out.StopReason == "" {
		out.StopReason = "stop"
	}
	if out.Text == "" && len(out.ToolCalls) == 0 {
		return nil, invalid("the response has no content")
	}
	return out, nil
}

func invalid(msg string) *llm.ProviderError {
	return &llm.ProviderError{Provider: ProviderName, StatusCode: http.StatusOK, Type: "invalid_response",
		Message: "invalid response: " + msg}
}

// statusError is a non-200 answer: Ollama sends {"error": "..."}.
func statusError(resp *http.Response) *llm.ProviderError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &llm.ProviderError{Provider: ProviderName, StatusCode: resp.StatusCode, Type: errorType(resp.StatusCode),
		Message: msg, RetryAfter: llm.ParseRetryAfter(resp.Header, time.Now())}
}

func errorType(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "not_found"
	case status == http.StatusTooManyRequests:
		return "rate_limit"
	case status >= 500:
		return "api_error"
	default:
		return "invalid_request"
	}
}

// transport is a failure to reach the server or to read its answer.
func (m *Model) transport(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancellation is the caller's decision, never a provider fault to
		// retry.
		return fmt.Errorf("ollama: %w", ctxErr)
	}
	return &llm.ProviderError{Provider: ProviderName, Message: llm.TransportMessage(err), Err: err}
}
