// Package openai implements llm.Model on the OpenAI Chat Completions API
// through the official Go SDK. Any OpenAI-compatible server works through
// Config.BaseURL: Ollama (http://host:11434/v1), vLLM, the llama.cpp server.
//
// Like package anthropic it is thin: request in, usage exactly as reported
// out (normalised as llm.Usage documents), every failure an
// *llm.ProviderError. The SDK's retries are off and it reads nothing from the
// environment.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

// ProviderName is the name carried by this package's errors.
const ProviderName = "openai"

// DefaultBaseURL is the official endpoint, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// ErrNoModel is returned when neither the Config nor the request names a model.
var ErrNoModel = errors.New("openai: no model named")

// Config configures a Model. Fields left empty are not filled from the
// environment; resolving OPENAI_API_KEY and friends is the caller's job.
type Config struct {
	// APIKey is sent as a bearer token. It may be empty for local servers
	// that need none (Ollama, llama.cpp).
	APIKey string
	// BaseURL is the API root including /v1; DefaultBaseURL when empty.
	BaseURL string
	// Model is used when a request names none.
	Model string
	// HTTPClient is used for every call. Nil means llm.NewHTTPClient with
	// llm.DefaultCallTimeout and llm.DefaultIdleTimeout; a client given here
	// is used as it is, so wrap its transport with llm.CallTimeoutTransport
	// and llm.IdleTimeoutTransport to keep those guards.
	HTTPClient *http.Client
	// CountTokens is kept for symmetry with package anthropic; OpenAI
	// caches prompt prefixes automatically, so nothing here depends on it.
	CountTokens func(string) int
}

// Model is an llm.Model speaking Chat Completions. It is safe for concurrent
// use.
type Model struct {
	completions sdk.ChatCompletionService
	cfg         Config
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.CountTokens == nil {
		cfg.CountTokens = tokens.Count
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("openai: base URL %q: must start with http:// or https://", base)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient(llm.DefaultCallTimeout, llm.DefaultIdleTimeout)
	}
	// The service is built directly rather than through sdk.NewClient, whose
	// defaults read OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID and more
	// from the environment and would add headers the caller never chose.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{completions: sdk.NewChatCompletionService(opts...), cfg: cfg}, nil
}

func (m *Model) params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	if model == "" {
		return sdk.ChatCompletionNewParams{}, ErrNoModel
	}
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	if err := req.ValidateTools(); err != nil {
		return p, fmt.Errorf("openai: %w", err)
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			if len(msg.ToolResults) == 0 {
				p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
				break
			}
			// Chat Completions answers each call with its own tool-role
			// message; text sent alongside follows as a user message.
			for _, r := range msg.ToolResults {
				content := r.Content
				if r.IsError {
					// The protocol has no error flag; without a marker
					// the model would take a failure for data.
					content = llm.ErrorPrefix + content
				}
				p.Messages = append(p.Messages, sdk.ToolMessage(content, r.CallID))
			}
			if msg.Content != "" {
				p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
			}
		case llm.RoleAssistant:
			if len(msg.ToolCalls) == 0 {
				p.Messages = append(p.Messages, sdk.AssistantMessage(msg.Content))
				break
			}
			a := sdk.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" {
				// content is null on a turn that only called tools, as
				// the API itself answers it.
				a.Content.OfString = sdk.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: c.Name, Arguments: arguments(c)}}})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("openai: message %d: unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(t.Schema)}
		if t.Schema == nil {
			fn.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode() {
		case "auto":
			p.ToolChoice.OfAuto = sdk.String(string(sdk.ChatCompletionToolChoiceOptionAutoAuto))
		case "any":
			p.ToolChoice.OfAuto = sdk.String(string(sdk.ChatCompletionToolChoiceOptionAutoRequired))
		case "none":
			p.ToolChoice.OfAuto = sdk.String(string(sdk.ChatCompletionToolChoiceOptionAutoNone))
		case "tool":
			p.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(
				sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Tool()})
		}
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		// max_completion_tokens replaces the deprecated max_tokens and is
		// the only one reasoning models accept; Ollama, vLLM and llama.cpp
		// read it too.
		p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	}
	if req.JSONSchema != nil && req.JSONSchema.Schema != nil {
		name := req.JSONSchema.Name
		if name == "" {
			name = "response"
		}
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: req.JSONSchema.Schema},
			},
		}
	}
	return p, nil
}

// arguments is a call's input as the arguments string the API sent: input
// kept as a JSON string because it was not valid JSON goes back as the text
// the model wrote, not as a quoted string.
func arguments(c llm.ToolCall) string {
	in := c.InputJSON()
	var s string
	if len(in) > 0 && in[0] == '"' && json.Unmarshal(in, &s) == nil {
		return s
	}
	return string(in)
}

// Generate sends req and returns the whole response.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("openai: nil request")
	}
	p, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var raw *http.Response
	var resp *llm.Response
	if req.Stream || req.OnText != nil {
		// A caller following the text (OnText) needs it as it is written.
		resp, err = m.stream(ctx, p, &raw, req.OnText)
	} else {
		var c *sdk.ChatCompletion
		c, err = m.completions.New(ctx, p, option.WithResponseInto(&raw))
		if err == nil {
			resp, err = m.response(c, raw)
		}
	}
	if err != nil {
		return nil, m.wrap(ctx, err, raw)
	}
	return resp, nil
}

func (m *Model) response(c *sdk.ChatCompletion, raw *http.Response) (*llm.Response, error) {
	status := statusOf(raw)
	if c == nil || len(c.Choices) == 0 {
		return nil, invalid(status, "the response has no choices")
	}
	ch := c.Choices[0]
	var calls []llm.ToolCall
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "function" && tc.Type != "" {
			// Custom (free-text) tools are never defined by baton. A
			// missing type, as some compatible servers send, is taken
			// for a function.
			continue
		}
		calls = append(calls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Input: llm.ToolInput(tc.Function.Arguments)})
	}
	if ch.Message.Content == "" && ch.Message.Refusal == "" && len(calls) == 0 {
		// Empty content is no answer either, whether null or "".
		return nil, invalid(status, "the first choice has no content")
	}
	text := ch.Message.Content
	if text == "" && ch.Message.Refusal != "" {
		text = ch.Message.Refusal
	}
	return &llm.Response{ID: c.ID, Model: c.Model, Text: text, StopReason: ch.FinishReason,
		ToolCalls: calls, Usage: usage(c.Usage)}, nil
}

// callBuilder gathers one streamed tool call: the id and name arrive in its
// first delta, the arguments in pieces after it.
type callBuilder struct {
	id, name string
	args     strings.Builder
}

// usage normalises OpenAI's counts: prompt_tokens include cached tokens,
// while llm.Usage keeps fresh input and cache reads apart.
func usage(u sdk.CompletionUsage) llm.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	return llm.Usage{
		InputTokens:          u.PromptTokens - cached,
		CacheReadInputTokens: cached,
		OutputTokens:         u.CompletionTokens,
	}
}

// stream sends p on the streaming endpoint and gathers the response;
// onText, when set, gets every piece of content as it arrives.
func (m *Model) stream(ctx context.Context, p sdk.ChatCompletionNewParams, raw **http.Response, onText func(string)) (*llm.Response, error) {
	// Without include_usage the stream carries no token counts at all, and
	// baton never estimates into reported usage.
	p.StreamOptions.IncludeUsage = sdk.Bool(true)
	s := m.completions.NewStreaming(ctx, p, option.WithResponseInto(raw))
	defer s.Close()
	var (
		out    llm.Response
		text   strings.Builder
		chunks int
		seen   bool
		done   bool           // a finish_reason arrived
		calls  []*callBuilder // by the index the stream gives each call
	)
	for s.Next() {
		c := s.Current()
		chunks++
		if out.ID == "" {
			out.ID = c.ID
		}
		if out.Model == "" {
			out.Model = c.Model
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			seen = true
			text.WriteString(ch.Delta.Content)
			if onText != nil && ch.Delta.Content != "" {
				onText(ch.Delta.Content)
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index < 0 || d.Index > int64(len(calls)) {
					return nil, invalid(statusOf(*raw), fmt.Sprintf("tool call delta for index %d after %d calls", d.Index, len(calls)))
				}
				if d.Index == int64(len(calls)) {
					calls = append(calls, &callBuilder{})
				}
				b := calls[d.Index]
				if d.ID != "" && b.id != "" && d.ID != b.id {
					// A new id at a used index: a compatible server
					// numbering every call 0, each sent whole. It is a
					// call of its own, not more of the last one.
					b = &callBuilder{}
					calls = append(calls, b)
				}
				if d.ID != "" {
					b.id = d.ID
				}
				if d.Function.Name != "" {
					// The name comes whole in the call's first delta; it
					// is set rather than appended so that a server
					// repeating it later does no harm.
					b.name = d.Function.Name
				}
				b.args.WriteString(d.Function.Arguments)
			}
			if ch.FinishReason != "" {
				out.StopReason = ch.FinishReason
				done = true
			}
		}
		if c.JSON.Usage.Valid() {
			out.Usage = usage(c.Usage)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if chunks == 0 || !seen {
		return nil, invalid(statusOf(*raw), "the stream carried no choices")
	}
	if !done {
		// A body that ends cleanly without a finish_reason is a stream
		// cut short: what arrived may be half an answer.
		return nil, llm.Incomplete(ProviderName, fmt.Sprintf("the stream ended before a finish_reason (after %d chunks)", chunks))
	}
	out.Text = text.String()
	for _, b := range calls {
		out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Input: llm.ToolInput(b.args.String())})
	}
	if out.Text == "" && len(out.ToolCalls) == 0 {
		return nil, invalid(statusOf(*raw), "the stream carried no content")
	}
	return &out, nil
}

func statusOf(raw *http.Response) int {
	if raw == nil {
		return http.StatusOK
	}
	return raw.StatusCode
}

func invalid(status int, msg string) *llm.ProviderError {
	return &llm.ProviderError{Provider: ProviderName, StatusCode: status, Type: "invalid_response",
		Message: "invalid response: " + msg}
}

// wrap turns an SDK failure into the error baton's callers branch on.
func (m *Model) wrap(ctx context.Context, err error, raw *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancellation is the caller's decision, never a provider fault to
		// retry.
		return fmt.Errorf("openai: %w", ctxErr)
	}
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe := &llm.ProviderError{Provider: ProviderName, StatusCode: apiErr.StatusCode,
			Type: apiErr.Type, Code: apiErr.Code, Message: m.redact(apiErr.Message), Err: m.redactErr(err)}
		if pe.Type == "" {
			pe.Type = apiErr.Code
		}
		if apiErr.Response != nil {
			pe.RetryAfter = llm.ParseRetryAfter(apiErr.Response.Header, time.Now())
		}
		if pe.Message == "" {
			pe.Message = http.StatusText(apiErr.StatusCode)
		}
		return pe
	}
	if raw != nil && raw.StatusCode == http.StatusOK && !llm.IsTransportError(err) {
		pe := invalid(http.StatusOK, "the body could not be decoded: "+m.redact(err.Error()))
		pe.Err = m.redactErr(err)
		return pe
	}
	return &llm.ProviderError{Provider: ProviderName, Message: m.redact(llm.TransportMessage(err)), Err: m.redactErr(err)}
}

func (m *Model) redact(s string) string { return llm.Redact(s, m.cfg.APIKey) }

func (m *Model) redactErr(err error) error { return llm.RedactError(err, m.cfg.APIKey) }
