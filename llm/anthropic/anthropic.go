// Package anthropic implements llm.Model on Anthropic's Messages API through
// the official Go SDK.
//
// The adapter is deliberately thin: it maps a request onto the SDK's
// parameters, returns usage exactly as the API reported it, and turns every
// failure into an *llm.ProviderError that baton's retry policy (package llm)
// can judge. The SDK's own retries are off so that policy is the only one that
// counts attempts, and the SDK does not read the environment: the caller's
// Config is the whole configuration.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

// ProviderName is the name carried by this package's errors.
const ProviderName = "anthropic"

// DefaultMaxTokens is sent when a request leaves MaxTokens at 0: the API
// requires max_tokens on every call.
const DefaultMaxTokens = 4096

// ErrNoModel is returned when neither the Config nor the request names a model.
var ErrNoModel = errors.New("anthropic: no model named")

// Config configures a Model. Fields left empty are not filled from the
// environment; resolving ANTHROPIC_API_KEY and friends is the caller's job.
type Config struct {
	// APIKey is sent as x-api-key. It may be empty for a gateway that
	// authenticates otherwise.
	APIKey string
	// BaseURL is the API root without /v1; the official endpoint when empty.
	BaseURL string
	// Model is used when a request names none.
	Model string
	// HTTPClient is used for every call. Nil means llm.NewHTTPClient with
	// llm.DefaultCallTimeout and llm.DefaultIdleTimeout; a client given here
	// is used as it is, so wrap its transport with llm.CallTimeoutTransport
	// and llm.IdleTimeoutTransport to keep those guards.
	HTTPClient *http.Client
	// CountTokens decides whether the system prompt is long enough to be
	// worth caching; tokens.Count when nil.
	CountTokens func(string) int
}

// Model is an llm.Model speaking the Anthropic Messages API. It is safe for
// concurrent use.
type Model struct {
	client sdk.Client
	cfg    Config
	// cacheable memoises, per system prompt, whether it reaches the
	// model's cache minimum: parallel sub-agents share a few skill
	// prompts, and counting each one per call costs more CPU than the
	// call's own encoding.
	cacheable sync.Map // key: model + "\x00" + system prompt
	memoized  atomic.Int64
}

// maxMemoized bounds the memo: a long-running process sending ever new
// system prompts keeps counting them instead of growing without end.
const maxMemoized = 1024

func (m *Model) isCacheable(model, system string) bool {
	min := MinCacheableTokens(model)
	key := model + "\x00" + system
	if v, ok := m.cacheable.Load(key); ok {
		return v.(bool)
	}
	ok := m.cfg.CountTokens(system) >= min
	if m.memoized.Add(1) <= maxMemoized {
		m.cacheable.Store(key, ok)
	}
	return ok
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.CountTokens == nil {
		cfg.CountTokens = tokens.Count
	}
	opts := []option.RequestOption{
		// Explicit configuration only: without this the SDK would pick up
		// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles and more.
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
			return nil, fmt.Errorf("anthropic: base URL %q: must start with http:// or https://", cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient(llm.DefaultCallTimeout, llm.DefaultIdleTimeout)
	}
	opts = append(opts, option.WithHTTPClient(hc))
	if cfg.APIKey != "" {
		// x-api-key is how the Messages API documents API-key
		// authentication; the header is set directly so that exactly one
		// credential header is sent.
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	}
	return &Model{client: sdk.NewClient(opts...), cfg: cfg}, nil
}

// minCacheable is the shortest prompt prefix, in tokens, that Anthropic will
// cache for a model family; a cache_control marker on anything shorter is
// ignored by the API, so baton does not send one. The first matching
// substring wins; unknown models get the conservative 1024.
//
//	model family                          minimum
//	claude-haiku-*, claude-3-haiku, -3-5-haiku  2048
//	claude-sonnet-*, claude-opus-*, others      1024
var minCacheable = []struct {
	substr string
	min    int
}{
	{"haiku", 2048},
	{"sonnet", 1024},
	{"opus", 1024},
}

// MinCacheableTokens is the minimum cacheable prompt length for model.
func MinCacheableTokens(model string) int {
	m := strings.ToLower(model)
	for _, e := range minCacheable {
		if strings.Contains(m, e.substr) {
			return e.min
		}
	}
	return 1024
}

// params maps a request onto the SDK's parameters, plus request options for
// what the typed parameters no longer carry.
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	model := req.Model
	if model == "" {
		model = m.cfg.Model
	}
	if model == "" {
		return sdk.MessageNewParams{}, nil, ErrNoModel
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		block := sdk.TextBlockParam{Text: req.System}
		if m.isCacheable(model, req.System) {
			// The system prompt is the stable prefix (a skill prompt), so
			// parallel sub-agents sharing a skill read it from the cache.
			block.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		p.System = []sdk.TextBlockParam{block}
	}
	if err := req.ValidateTools(); err != nil {
		return p, nil, fmt.Errorf("anthropic: %w", err)
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			p.Messages = append(p.Messages, sdk.NewUserMessage(userBlocks(msg)...))
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(assistantBlocks(msg)...))
		default:
			return p, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		tp := sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Schema)}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice.Mode() {
		case "auto":
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}
		case "any":
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
		case "none":
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		case "tool":
			p.ToolChoice = sdk.ToolChoiceParamOfTool(req.ToolChoice.Tool())
		}
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// SDK v2 dropped the typed temperature field after the API
		// deprecated it; the API still reads it, and a caller who set one
		// asked for it, so it goes into the body directly.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	if req.JSONSchema != nil && req.JSONSchema.Schema != nil {
		// This SDK version offers structured output in the non-beta Messages
		// API (output_config.format), so the schema is enforced by the
		// service; baton still validates the text it gets back.
		p.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: req.JSONSchema.Schema}
	}
	return p, opts, nil
}

// userBlocks is a user turn: tool results first, as the API requires, then
// the text. A plain turn keeps its single text block even when empty, as it
// always has.
func userBlocks(msg llm.Message) []sdk.ContentBlockParamUnion {
	if len(msg.ToolResults) == 0 {
		return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(msg.Content)}
	}
	var blocks []sdk.ContentBlockParamUnion
	for _, r := range msg.ToolResults {
		b := sdk.NewToolResultBlock(r.CallID, r.Content, r.IsError)
		if !r.IsError {
			// is_error defaults to false; leaving it out keeps the body
			// as small as the API's own examples.
			b.OfToolResult.IsError = param.Opt[bool]{}
		}
		if r.Content == "" {
			// The API refuses empty text blocks; a result with no
			// content is sent without any.
			b.OfToolResult.Content = nil
		}
		blocks = append(blocks, b)
	}
	if msg.Content != "" {
		blocks = append(blocks, sdk.NewTextBlock(msg.Content))
	}
	return blocks
}

// assistantBlocks is an assistant turn: the text said, when any (the API
// refuses empty text blocks next to tool calls), then its tool calls.
func assistantBlocks(msg llm.Message) []sdk.ContentBlockParamUnion {
	if len(msg.ToolCalls) == 0 {
		return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(msg.Content)}
	}
	var blocks []sdk.ContentBlockParamUnion
	if msg.Content != "" {
		blocks = append(blocks, sdk.NewTextBlock(msg.Content))
	}
	for _, c := range msg.ToolCalls {
		blocks = append(blocks, sdk.NewToolUseBlock(c.ID, toolUseInput(c), c.Name))
	}
	return blocks
}

// toolUseInput is the input of a call sent back to the API, which accepts
// only an object. Input that is not one (arguments cut short by max_tokens,
// kept as a JSON string) goes back as {}: the call's error result has
// already told the model what was wrong, and a 400 would end the loop.
func toolUseInput(c llm.ToolCall) json.RawMessage {
	in := c.InputJSON()
	var obj map[string]json.RawMessage
	if json.Unmarshal(in, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return in
}

// inputSchema maps a JSON Schema onto the SDK's input schema, whose typed
// fields cover properties and required; every other keyword travels as an
// extra field. The type is always object, as the API requires.
func inputSchema(schema map[string]any) sdk.ToolInputSchemaParam {
	var s sdk.ToolInputSchemaParam
	if schema == nil {
		s.Properties = map[string]any{}
		return s
	}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			switch r := v.(type) {
			case []string:
				s.Required = r
			case []any:
				for _, x := range r {
					if name, ok := x.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// Generate sends req and returns the whole response.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request")
	}
	var raw *http.Response
	p, opts, err := m.params(req)
	if err != nil {
		return nil, err
	}
	opts = append(opts, option.WithResponseInto(&raw))
	var msg *sdk.Message
	// A caller following the text (OnText) needs it as it is written.
	stream := req.Stream || req.OnText != nil
	if !stream {
		// The SDK refuses non-streaming calls whose max_tokens could take
		// longer than its HTTP timeout; stream those, as the SDK advises.
		if _, terr := sdk.CalculateNonStreamingTimeout(int(p.MaxTokens), p.Model, nil); terr != nil {
			stream = true
		}
	}
	if stream {
		msg, err = m.stream(ctx, p, opts, req.OnText)
	} else {
		msg, err = m.client.Messages.New(ctx, p, opts...)
	}
	if err != nil {
		return nil, m.wrap(ctx, err, raw)
	}
	return m.response(msg, raw)
}

// stream sends p on the streaming endpoint and accumulates the message;
// onText, when set, gets every text delta as it arrives.
func (m *Model) stream(ctx context.Context, p sdk.MessageNewParams, opts []option.RequestOption, onText func(string)) (*sdk.Message, error) {
	s := m.client.Messages.NewStreaming(ctx, p, opts...)
	defer s.Close()
	var acc sdk.Message
	events := 0
	stopped := false
	// The SDK replaces tool input that is not valid JSON once streamed (a
	// call cut short by max_tokens) with {}, which would run the tool with
	// no arguments; the text as streamed is kept so that the caller can
	// tell the model its call was cut short (see llm.ToolCall).
	partial := map[int64]*strings.Builder{}
	for s.Next() {
		ev := s.Current()
		if err := acc.Accumulate(ev); err != nil {
			return nil, &decodeError{err}
		}
		if onText != nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			onText(ev.Delta.Text)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			b := partial[ev.Index]
			if b == nil {
				b = &strings.Builder{}
				partial[ev.Index] = b
			}
			b.WriteString(ev.Delta.PartialJSON)
		}
		if ev.Type == "message_stop" {
			stopped = true
		}
		events++
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if events == 0 || acc.Type == "" {
		// Not a Messages stream at all (an HTML error page, say): retrying
		// will not help.
		return nil, &decodeError{errors.New("the event stream ended without a message")}
	}
	if !stopped {
		// A body that ends cleanly before message_stop is a stream cut
		// short (a proxy, a load balancer, a server giving up): what
		// arrived may be half an answer, so it is never taken for one.
		return nil, llm.Incomplete(ProviderName, fmt.Sprintf("the stream ended before message_stop (after %d events)", events))
	}
	for i, b := range partial {
		if i < int64(len(acc.Content)) && b.Len() > 0 && !json.Valid([]byte(b.String())) {
			acc.Content[i].Input = json.RawMessage(b.String())
		}
	}
	return &acc, nil
}

// decodeError marks a response that arrived but could not be understood.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

func (m *Model) response(msg *sdk.Message, raw *http.Response) (*llm.Response, error) {
	status := http.StatusOK
	if raw != nil {
		status = raw.StatusCode
	}
	if msg == nil || msg.Type != "message" {
		return nil, m.invalid(status, "the response is not a message")
	}
	var text strings.Builder
	var calls []llm.ToolCall
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, llm.ToolCall{ID: b.ID, Name: b.Name, Input: llm.ToolInput(string(b.Input))})
		}
	}
	if text.Len() == 0 && len(calls) == 0 {
		// An empty text block is no answer either: a caller taking it for
		// one would report an empty finding as a success.
		return nil, m.invalid(status, "the response has no text content")
	}
	return &llm.Response{
		ID:         msg.ID,
		Model:      string(msg.Model),
		Text:       text.String(),
		StopReason: string(msg.StopReason),
		ToolCalls:  calls,
		Usage: llm.Usage{
			InputTokens:              msg.Usage.InputTokens,
			OutputTokens:             msg.Usage.OutputTokens,
			CacheReadInputTokens:     msg.Usage.CacheReadInputTokens,
			CacheCreationInputTokens: msg.Usage.CacheCreationInputTokens,
		},
	}, nil
}

func (m *Model) invalid(status int, msg string) *llm.ProviderError {
	return &llm.ProviderError{Provider: ProviderName, StatusCode: status, Type: "invalid_response",
		Message: "invalid response: " + msg}
}

// wrap turns an SDK failure into the error baton's callers branch on.
func (m *Model) wrap(ctx context.Context, err error, raw *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancellation is the caller's decision, never a provider fault to
		// retry.
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe := &llm.ProviderError{Provider: ProviderName, StatusCode: apiErr.StatusCode,
			Type: string(apiErr.Type()), Message: m.redact(apiErr.Message), Err: m.redactErr(err)}
		if apiErr.Response != nil {
			pe.RetryAfter = llm.ParseRetryAfter(apiErr.Response.Header, time.Now())
		}
		if pe.Message == "" {
			pe.Message = http.StatusText(apiErr.StatusCode)
		}
		return pe
	}
	var de *decodeError
	if raw != nil && raw.StatusCode == http.StatusOK && !llm.IsTransportError(err) || errors.As(err, &de) {
		status := http.StatusOK
		if raw != nil {
			status = raw.StatusCode
		}
		pe := m.invalid(status, "the body could not be decoded: "+m.redact(err.Error()))
		pe.Err = m.redactErr(err)
		return pe
	}
	return &llm.ProviderError{Provider: ProviderName, Message: m.redact(llm.TransportMessage(err)), Err: m.redactErr(err)}
}

func (m *Model) redact(s string) string { return llm.Redact(s, m.cfg.APIKey) }

func (m *Model) redactErr(err error) error { return llm.RedactError(err, m.cfg.APIKey) }
