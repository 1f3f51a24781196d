package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/baton-dev/baton/llm"
)

// The types below follow the field names of the real services exactly; the
// SDKs decode them, so a misspelt field shows up as a failing adapter test.

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func toAnthropicUsage(u llm.Usage) anthropicUsage {
	return anthropicUsage{
		InputTokens:              u.InputTokens,
		OutputTokens:             u.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
	}
}

type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// MarshalJSON writes a tool_use block without the text field, as the
// service does.
func (b anthropicBlock) MarshalJSON() ([]byte, error) {
	if b.Type == "tool_use" {
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, b.Input})
	}
	type plain anthropicBlock
	return json.Marshal(plain(b))
}

// anthropicContent is the content of a reply: its text block (kept even when
// empty unless the reply calls tools) and a tool_use block per call.
func anthropicContent(r Reply) []anthropicBlock {
	blocks := []anthropicBlock{}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		blocks = append(blocks, anthropicBlock{Type: "text", Text: r.Text})
	}
	for _, c := range r.ToolCalls {
		in := c.InputJSON()
		if !json.Valid(in) {
			in, _ = json.Marshal(string(in)) // a string always marshals
		}
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: in})
	}
	return blocks
}

type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

type openAIUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// toOpenAIUsage converts back from baton's normalised usage: OpenAI's
// prompt_tokens include cached tokens. OpenAI has no cache-write count, so
// cache creation tokens are billed as ordinary prompt tokens.
func toOpenAIUsage(u llm.Usage) openAIUsage {
	var o openAIUsage
	o.PromptTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	o.CompletionTokens = u.OutputTokens
	o.TotalTokens = o.PromptTokens + o.CompletionTokens
	o.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return o
}

type openAIMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Refusal   *string          `json:"refusal"`
	ToolCalls []openAIToolCall `json:"tool_calls,omitempty"`
}

// MarshalJSON writes content null on a turn that only calls tools, as the
// service does.
func (m openAIMessage) MarshalJSON() ([]byte, error) {
	type plain openAIMessage
	if m.Content != "" || len(m.ToolCalls) == 0 {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content *string `json:"content"`
	}{plain: plain(m)})
}

type openAIFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type openAIToolCall struct {
	Index    *int           `json:"index,omitempty"` // in stream deltas only
	ID       string         `json:"id,omitempty"`
	Type     string         `json:"type,omitempty"`
	Function openAIFunction `json:"function"`
}

func openAIReplyCalls(r Reply) []openAIToolCall {
	var out []openAIToolCall
	for _, c := range r.ToolCalls {
		out = append(out, openAIToolCall{ID: c.ID, Type: "function",
			Function: openAIFunction{Name: c.Name, Arguments: string(c.InputJSON())}})
	}
	return out
}

type openAIChoice struct {
	Index        int           `json:"index"`
	Message      openAIMessage `json:"message"`
	Logprobs     *struct{}     `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type openAICompletion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   openAIUsage    `json:"usage"`
}

type openAIDelta struct {
	Role      string           `json:"role,omitempty"`
	Content   *string          `json:"content,omitempty"`
	ToolCalls []openAIToolCall `json:"tool_calls,omitempty"`
}

type openAIChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openAIDelta `json:"delta"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason *string     `json:"finish_reason"`
}

type openAIChunk struct {
	ID      string              `json:"id"`
	Object  string              `json:"object"`
	Created int64               `json:"created"`
	Model   string              `json:"model"`
	Choices []openAIChunkChoice `json:"choices"`
	Usage   *openAIUsage        `json:"usage"`
}

func stopReason(p Protocol, r Reply) string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolCalls) > 0 && p == Anthropic:
		return "tool_use"
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	case p == Anthropic:
		return "end_turn"
	default:
		return "stop"
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "llmtest: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeAnthropic(w http.ResponseWriter, id string, r Reply, u llm.Usage) {
	stop := stopReason(Anthropic, r)
	m := anthropicMessage{ID: id, Type: "message", Role: "assistant", Model: r.Model,
		Content: anthropicContent(r), StopReason: &stop, Usage: toAnthropicUsage(u)}
	if r.Empty {
		m.Content = []anthropicBlock{}
	}
	w.Header().Set("request-id", "req_"+id)
	writeJSON(w, http.StatusOK, m)
}

func writeOpenAI(w http.ResponseWriter, id string, r Reply, u llm.Usage) {
	c := openAICompletion{ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: r.Model,
		Choices: []openAIChoice{{Message: openAIMessage{Role: "assistant", Content: r.Text, ToolCalls: openAIReplyCalls(r)},
			FinishReason: stopReason(OpenAI, r)}},
		Usage: toOpenAIUsage(u)}
	if r.Empty {
		c.Choices = []openAIChoice{}
	}
	w.Header().Set("x-request-id", "req_"+id)
	writeJSON(w, http.StatusOK, c)
}

// sse writes server-sent events and flushes after each, so that clients see
// a real stream rather than one buffered body.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
	// ctx is the request's: a stalled stream waits on it.
	ctx    context.Context
	fault  StreamFault
	events int  // events written so far
	dead   bool // the fault ended the stream; later writes are dropped
}

func newSSE(ctx context.Context, w http.ResponseWriter, fault StreamFault) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sse{w: w, f: f, ctx: ctx, fault: fault}
	s.flush()
	return s
}

func (s *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	if s.faultBefore(name, b) {
		return
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.events++
	s.flush()
}

func (s *sse) raw(line string) {
	if s.faultBefore("", []byte(line)) {
		return
	}
	fmt.Fprintf(s.w, "%s\n\n", line)
	s.events++
	s.flush()
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// pieces splits text the way a model streams it: a few words per delta.
// Joining the pieces gives back text exactly.
func pieces(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// textPieces are the text deltas of a streamed reply: its Pieces when set.
func textPieces(r Reply) []string {
	if len(r.Pieces) > 0 {
		return r.Pieces
	}
	return pieces(r.Text)
}

// beforePiece runs the reply's BeforePiece hook, if any, for delta i.
func beforePiece(r Reply, i int) {
	if r.BeforePiece != nil {
		r.BeforePiece(i)
	}
}

// jsonPieces splits JSON text into short pieces, on rune boundaries, the way
// tool input streams. Joining the pieces gives back s exactly.
func jsonPieces(s string) []string {
	const n = 8
	var out []string
	r := []rune(s)
	for i := 0; i < len(r); i += n {
		out = append(out, string(r[i:min(i+n, len(r))]))
	}
	return out
}

func writeAnthropicStream(ctx context.Context, w http.ResponseWriter, id string, r Reply, u llm.Usage) {
	w.Header().Set("request-id", "req_"+id)
	s := newSSE(ctx, w, r.Fault)
	start := anthropicMessage{ID: id, Type: "message", Role: "assistant", Model: r.Model,
		Content: []anthropicBlock{}, Usage: toAnthropicUsage(u)}
	// Like the real service, message_start carries the input side of usage
	// and a provisional output count; message_delta carries the final one.
	start.Usage.OutputTokens = min(1, u.OutputTokens)
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	if !r.Empty {
		index := 0
		if r.Text != "" || len(r.ToolCalls) == 0 {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
				"content_block": anthropicBlock{Type: "text", Text: ""}})
			s.event("ping", map[string]any{"type": "ping"})
			for i, p := range textPieces(r) {
				beforePiece(r, i)
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
					"delta": map[string]any{"type": "text_delta", "text": p}})
			}
			s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
		for _, c := range r.ToolCalls {
			// As the service does: the block starts with an empty input
			// and the input arrives as pieces of JSON text.
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
				"content_block": anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage("{}")}})
			for _, p := range jsonPieces(string(c.InputJSON())) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
			s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(Anthropic, r), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens}})
	if !s.noEnd() {
		s.event("message_stop", map[string]any{"type": "message_stop"})
	}
}

func writeOpenAIStream(ctx context.Context, w http.ResponseWriter, id string, r Reply, u llm.Usage, includeUsage bool) {
	w.Header().Set("x-request-id", "req_"+id)
	s := newSSE(ctx, w, r.Fault)
	created := time.Now().Unix()
	chunk := func(choices []openAIChunkChoice, usage *openAIUsage) openAIChunk {
		return openAIChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: r.Model,
			Choices: choices, Usage: usage}
	}
	if !r.Empty {
		empty := ""
		s.event("", chunk([]openAIChunkChoice{{Delta: openAIDelta{Role: "assistant", Content: &empty}}}, nil))
		for i, p := range textPieces(r) {
			beforePiece(r, i)
			s.event("", chunk([]openAIChunkChoice{{Delta: openAIDelta{Content: &p}}}, nil))
		}
		for i, c := range openAIReplyCalls(r) {
			// As the service does: the first delta of a call carries its
			// index, id, type and name, later ones pieces of the arguments.
			args := c.Function.Arguments
			c.Index, c.Function.Arguments = &i, ""
			s.event("", chunk([]openAIChunkChoice{{Delta: openAIDelta{ToolCalls: []openAIToolCall{c}}}}, nil))
			for _, p := range jsonPieces(args) {
				d := openAIToolCall{Index: &i, Function: openAIFunction{Arguments: p}}
				s.event("", chunk([]openAIChunkChoice{{Delta: openAIDelta{ToolCalls: []openAIToolCall{d}}}}, nil))
			}
		}
		if s.noEnd() {
			return
		}
		stop := stopReason(OpenAI, r)
		s.event("", chunk([]openAIChunkChoice{{Delta: openAIDelta{}, FinishReason: &stop}}, nil))
	}
	if s.noEnd() {
		return
	}
	if includeUsage {
		ou := toOpenAIUsage(u)
		s.event("", chunk([]openAIChunkChoice{}, &ou))
	}
	s.raw("data: [DONE]")
}

func writeGarbage(w http.ResponseWriter, stream bool) {
	if stream {
		s := newSSE(context.Background(), w, StreamFault{})
		s.raw("data: <html>upstream proxy error</html>")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("<html><body>502 Bad Gateway (not JSON)</body></html>"))
}

// errorType is the provider's type for a status when the reply names none.
func errorType(p Protocol, status int) string {
	if p == Anthropic {
		switch status {
		case 400:
			return "invalid_request_error"
		case 401:
			return "authentication_error"
		case 403:
			return "permission_error"
		case 404:
			return "not_found_error"
		case 413:
			return "request_too_large"
		case 429:
			return "rate_limit_error"
		case 529:
			return "overloaded_error"
		}
		return "api_error"
	}
	switch {
	case status == 429:
		return "rate_limit_exceeded"
	case status == 401:
		return "invalid_api_key"
	case status == 404:
		return "not_found_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func writeError(w http.ResponseWriter, p Protocol, r Reply) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	typ := r.ErrorType
	if typ == "" {
		typ = errorType(p, r.Status)
	}
	msg := r.ErrorMessage
	if msg == "" {
		msg = fmt.Sprintf("llmtest: scripted %d %s", r.Status, typ)
	}
	if p == Ollama {
		writeOllamaError(w, r.Status, msg)
		return
	}
	if p == Anthropic {
		w.Header().Set("request-id", "req_llmtest_error")
		writeJSON(w, r.Status, map[string]any{"type": "error",
			"error": map[string]any{"type": typ, "message": msg}})
		return
	}
	writeJSON(w, r.Status, map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": typ}})
}

func (s *Server) serveTags(w http.ResponseWriter) {
	s.mu.Lock()
	off, names := s.noOllama, append([]string(nil), s.models...)
	s.mu.Unlock()
	if off {
		http.NotFound(w, nil)
		return
	}
	type model struct {
		Name       string `json:"name"`
		Model      string `json:"model"`
		ModifiedAt string `json:"modified_at"`
		Size       int64  `json:"size"`
		Digest     string `json:"digest"`
	}
	out := struct {
		Models []model `json:"models"`
	}{Models: []model{}}
	for _, n := range names {
		out.Models = append(out.Models, model{Name: n, Model: n, ModifiedAt: "2025-01-01T00:00:00Z",
			Size: 2_000_000_000, Digest: fmt.Sprintf("%064x", len(n))})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	names := append([]string(nil), s.models...)
	s.mu.Unlock()
	if r.Header.Get("anthropic-version") != "" {
		type model struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		data := []model{}
		for _, n := range names {
			data = append(data, model{Type: "model", ID: n, DisplayName: n, CreatedAt: "2025-01-01T00:00:00Z"})
		}
		var first, last *string
		if len(names) > 0 {
			first, last = &names[0], &names[len(names)-1]
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := []model{}
	for _, n := range names {
		data = append(data, model{ID: n, Object: "model", Created: 1735689600, OwnedBy: "llmtest"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
