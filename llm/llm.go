// Package llm is baton's provider-neutral view of a language model: one call,
// a request in and a response with exact usage out. Providers live in
// sub-packages built on the official SDKs; the policies every provider shares
// (retries with backoff, concurrency and rate limits) live here so that there
// is exactly one place that counts attempts and spends budget.
package llm

import (
	"context"
	"encoding/json"
)

// Model is the one interface the rest of baton calls. Implementations must be
// safe for concurrent use and must honour ctx cancellation.
type Model interface {
	// Generate sends one request and returns the whole response. Errors that
	// came from the provider's HTTP API are *ProviderError so that the retry
	// policy can decide on them.
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of the conversation sent to the model.
//
// An assistant turn that called tools carries them in ToolCalls, with any text
// said alongside in Content (often empty). The turn answering those calls is a
// user message whose ToolResults hold one result per call; Content, when set,
// is text sent after the results (Anthropic puts both in one user message,
// OpenAI sends one tool-role message per result and then a user message).
// Request.ValidateTools states the pairing rules every provider enforces.
type Message struct {
	Role        Role         `json:"role"`
	Content     string       `json:"content"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// Schema asks the provider for JSON output that follows a JSON schema. A
// provider that cannot enforce it may ignore it; callers still validate.
type Schema struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

// Request is one model call. System is the stable prefix (a skill prompt):
// providers that support prompt caching mark it cacheable, so callers should
// keep everything that varies per call out of it.
type Request struct {
	Model       string    `json:"model"`
	System      string    `json:"system,omitempty"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens"`
	// JSONSchema, when set, asks for structured output.
	JSONSchema *Schema `json:"json_schema,omitempty"`
	// Stream asks the provider to use its streaming (SSE) endpoint; the
	// response is still returned whole. It changes transport, not meaning.
	Stream bool `json:"stream,omitempty"`
	// OnText, when set, is called with every piece of the answer's text as
	// it arrives, in order, on the goroutine that called Generate; the
	// providers stream whenever it is set, whatever Stream says. The
	// pieces of one attempt joined are the attempt's Response.Text. It
	// must return quickly: the stream waits for it.
	OnText func(delta string) `json:"-"`
	// OnRestart, when set, is called by the retry policy (Retrying) before
	// an attempt that follows one which had already passed text to OnText:
	// that text is void, and the next OnText starts the answer again from
	// its beginning. A consumer showing the text must discard or mark what
	// it showed, so that what it shows is never a splice of two attempts.
	OnRestart func() `json:"-"`
	// Tools the model may call through the provider's native tool calling.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice says whether the model must, may or must not call a tool;
	// empty leaves it to the provider's default (auto when tools are given).
	ToolChoice ToolChoice `json:"tool_choice,omitempty"`
}

// Usage is what the provider reported for one call, field by field. baton never
// estimates into these fields: estimates live elsewhere and are labelled so.
//
// InputTokens excludes cache reads and writes, as in Anthropic's API. For
// OpenAI-compatible providers, whose prompt_tokens include cached tokens,
// InputTokens is prompt_tokens minus cached_tokens and CacheReadInputTokens is
// cached_tokens, so InputTokens+CacheRead+CacheCreation is always the whole
// prompt the provider processed.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// Add returns the field-wise sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
	}
}

// PromptTokens is the whole prompt the provider processed: fresh input plus
// cache reads plus cache writes.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// Response is the whole answer to one Request.
type Response struct {
	ID    string `json:"id,omitempty"`
	Model string `json:"model,omitempty"`
	Text  string `json:"text"`
	// StopReason is the provider's own word ("end_turn", "max_tokens",
	// "tool_use", "stop", "length", "tool_calls", ...).
	StopReason string `json:"stop_reason"`
	// ToolCalls are the tools the model asked to run, in its order. Text may
	// hold what it said alongside them.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Attempts is how many HTTP attempts the retry policy made; 0 when the
	// model was called without one.
	Attempts int `json:"attempts,omitempty"`
}

// Truncated reports whether the reply stopped at its max_tokens rather than
// where the model meant to end: Anthropic says "max_tokens", OpenAI and
// Ollama say "length". Such a reply reads as an answer but is only its start.
func (r *Response) Truncated() bool {
	return r != nil && (r.StopReason == "max_tokens" || r.StopReason == "length")
}

// Float is a convenience for Request.Temperature.
func Float(f float64) *float64 { return &f }

// MarshalSchema is a helper for tests and providers that need the schema as
// raw JSON.
func (s *Schema) MarshalSchema() (json.RawMessage, error) { return json.Marshal(s.Schema) }
