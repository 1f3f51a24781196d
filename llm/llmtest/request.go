package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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
	Header         http.Header
	Body           []byte

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

func (r RecordedRequest) clone() RecordedRequest {
	r.Messages = append([]llm.Message(nil), r.Messages...)
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
		last = r.Messages[n-1].Content
	}
	return fmt.Sprintf("%s request #%d (model %q, system %q, last message %q)",
		r.Protocol, r.seq, r.Model, clip(r.System, 60), clip(last, 60))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
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
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

const maxBody = 64 << 20

func parseRequest(r *http.Request, p Protocol) (RecordedRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return RecordedRequest{}, fmt.Errorf("llmtest: reading request body: %w", err)
	}
	rec := RecordedRequest{Protocol: p, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
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
	for i, m := range w.Messages {
		text, _, err := content(m.Content)
		if err != nil {
			return fmt.Errorf("llmtest: messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "user", "assistant":
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.Role(m.Role), Content: text})
		case "system", "developer":
			if rec.Protocol == Anthropic {
				return fmt.Errorf("llmtest: messages[%d].role: %q is not allowed; use the top-level system parameter", i, m.Role)
			}
			system = append(system, text)
		default:
			return fmt.Errorf("llmtest: messages[%d].role: unknown role %q", i, m.Role)
		}
	}
	rec.System = strings.Join(system, "\n")
	return nil
}

// content reads a string or an array of text blocks, reporting whether any
// block carried cache_control.
func content(raw json.RawMessage) (string, bool, error) {
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
// accounting counts it.
func promptTokens(rec RecordedRequest) int {
	n := tokens.Count(rec.System)
	for _, m := range rec.Messages {
		n += tokens.Count(m.Content)
	}
	return n
}

// computeUsage is the usage to report: the reply's own or a real count.
func computeUsage(reply Reply, prompt int) llm.Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	return llm.Usage{InputTokens: int64(prompt), OutputTokens: int64(tokens.Count(reply.Text))}
}
