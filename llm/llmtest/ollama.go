package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/baton-dev/baton/llm"
)

// Ollama is Ollama's native chat API (POST /api/chat), with POST /api/show
// for a model's details. As the real server does, it runs each request with
// the window its options.num_ctx names, or OllamaDefaultContext without one,
// and silently drops what does not fit: the fake answers as usual and
// records the request as Truncated.
const Ollama Protocol = "ollama"

// OllamaDefaultContext is the window Ollama runs a request with when the
// request sets no num_ctx (and the server no OLLAMA_CONTEXT_LENGTH): 4096
// in current releases, 2048 in older ones.
const OllamaDefaultContext = 4096

// DefaultModelContextLength is the context length /api/show reports for a
// model (its model_info "<architecture>.context_length") unless
// SetModelContextLength says otherwise.
const DefaultModelContextLength = 131072

// SetModelContextLength sets the context length /api/show reports for every
// model; 0 leaves it out of model_info, as for a model whose metadata lacks
// it.
func (s *Server) SetModelContextLength(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modelContext = n
}

type ollamaWireMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id,omitempty"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
	ToolName string `json:"tool_name,omitempty"`
}

type ollamaWireRequest struct {
	Model    string              `json:"model"`
	Messages []ollamaWireMessage `json:"messages"`
	// Stream defaults to true on this API.
	Stream *bool           `json:"stream"`
	Format json.RawMessage `json:"format"`
	Tools  []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Options struct {
		NumCtx      *int     `json:"num_ctx"`
		NumPredict  *int     `json:"num_predict"`
		Temperature *float64 `json:"temperature"`
	} `json:"options"`
}

// decodeOllama fills rec from an /api/chat body. Tool results carry no call
// ID on this API, only the tool's name: ToolResult.CallID is that name.
func decodeOllama(rec *RecordedRequest, body []byte) error {
	var w ollamaWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return fmt.Errorf("llmtest: request body is not valid JSON: %v", err)
	}
	if w.Model == "" {
		return errors.New("llmtest: model is required")
	}
	rec.Model = w.Model
	rec.Stream = w.Stream == nil || *w.Stream
	rec.Temperature = w.Options.Temperature
	if w.Options.NumPredict != nil {
		rec.MaxTokens = *w.Options.NumPredict
	}
	if w.Options.NumCtx != nil {
		rec.NumCtx = *w.Options.NumCtx
	}
	if len(w.Format) > 0 && string(w.Format) != "null" {
		rec.ResponseFormat = w.Format
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	var system string
	afterTools := false
	for i, m := range w.Messages {
		switch m.Role {
		case "system":
			if system != "" {
				system += "\n"
			}
			system += m.Content
			continue
		case "user":
			if afterTools {
				rec.Messages[len(rec.Messages)-1].Content = m.Content
				afterTools = false
				continue
			}
			rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleUser, Content: m.Content})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: m.Content}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Input: compact(c.Function.Arguments)})
			}
			rec.Messages = append(rec.Messages, msg)
		case "tool":
			r := llm.ToolResult{CallID: m.ToolName, Content: m.Content}
			if afterTools {
				last := &rec.Messages[len(rec.Messages)-1]
				last.ToolResults = append(last.ToolResults, r)
			} else {
				rec.Messages = append(rec.Messages, llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{r}})
			}
			afterTools = true
			continue
		default:
			return fmt.Errorf("llmtest: messages[%d]: unknown role %q", i, m.Role)
		}
		afterTools = false
	}
	rec.System = system
	if len(rec.Messages) == 0 {
		return errors.New("llmtest: messages: at least one message is required")
	}
	return nil
}

// ollamaWindow is the window the server runs rec with.
func ollamaWindow(rec RecordedRequest) int {
	if rec.NumCtx > 0 {
		return rec.NumCtx
	}
	return OllamaDefaultContext
}

type ollamaWireCall struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type ollamaWireReply struct {
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	Message   struct {
		Role      string           `json:"role"`
		Content   string           `json:"content"`
		ToolCalls []ollamaWireCall `json:"tool_calls,omitempty"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason,omitempty"`
	PromptEvalCount int64  `json:"prompt_eval_count,omitempty"`
	EvalCount       int64  `json:"eval_count,omitempty"`
}

func ollamaReply(model string) ollamaWireReply {
	var r ollamaWireReply
	r.Model, r.CreatedAt, r.Message.Role = model, time.Now().UTC().Format(time.RFC3339Nano), "assistant"
	return r
}

// ollamaCalls are a reply's tool calls as Ollama sends them: no ID, the
// arguments an object.
func ollamaCalls(r Reply) []ollamaWireCall {
	var out []ollamaWireCall
	for _, c := range r.ToolCalls {
		var oc ollamaWireCall
		oc.Function.Name, oc.Function.Arguments = c.Name, c.InputJSON()
		if !json.Valid(oc.Function.Arguments) {
			oc.Function.Arguments = json.RawMessage("{}")
		}
		out = append(out, oc)
	}
	return out
}

func ollamaDone(r Reply) string {
	if r.StopReason != "" {
		return r.StopReason
	}
	return "stop"
}

func writeOllama(w http.ResponseWriter, r Reply, u llm.Usage) {
	out := ollamaReply(r.Model)
	if !r.Empty {
		out.Message.Content, out.Message.ToolCalls = r.Text, ollamaCalls(r)
	}
	out.Done, out.DoneReason = true, ollamaDone(r)
	out.PromptEvalCount, out.EvalCount = u.PromptTokens(), u.OutputTokens
	writeJSON(w, http.StatusOK, out)
}

// writeOllamaStream writes newline-delimited JSON, one object per delta and
// the counts on the last, flushing after each. Of the stream faults, a cut
// after n lines (FaultEnd, FaultCutLine) and a missing end (FaultNoEnd) are
// spoken: the body ends without the done line.
func writeOllamaStream(ctx context.Context, w http.ResponseWriter, r Reply, u llm.Usage) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	lines := 0
	cut := func() bool {
		m := r.Fault.Mode
		return (m == FaultEnd || m == FaultCutLine) && lines >= r.Fault.After
	}
	line := func(v ollamaWireReply) bool {
		if cut() || ctx.Err() != nil {
			return false
		}
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		if f != nil {
			f.Flush()
		}
		lines++
		return true
	}
	if !r.Empty {
		for i, p := range textPieces(r) {
			beforePiece(r, i)
			v := ollamaReply(r.Model)
			v.Message.Content = p
			if !line(v) {
				return
			}
		}
		if calls := ollamaCalls(r); len(calls) > 0 {
			v := ollamaReply(r.Model)
			v.Message.ToolCalls = calls
			if !line(v) {
				return
			}
		}
	}
	if r.Fault.Mode == FaultNoEnd {
		return
	}
	v := ollamaReply(r.Model)
	v.Done, v.DoneReason = true, ollamaDone(r)
	v.PromptEvalCount, v.EvalCount = u.PromptTokens(), u.OutputTokens
	line(v)
}

func writeOllamaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// serveShow answers POST /api/show with a model's details: the part of
// model_info that says its context length, and its Modelfile parameters.
func (s *Server) serveShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // the older field
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil {
		writeOllamaError(w, http.StatusBadRequest, "invalid request body")
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	s.mu.Lock()
	known, ctxLen, off := false, s.modelContext, s.noOllama
	for _, m := range s.models {
		known = known || m == name
	}
	s.mu.Unlock()
	if off {
		http.NotFound(w, r)
		return
	}
	if !known {
		writeOllamaError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	info := map[string]any{"general.architecture": "llama", "general.parameter_count": 3212749888}
	if ctxLen > 0 {
		info["llama.context_length"] = ctxLen
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"modelfile":    "# Modelfile generated by llmtest",
		"parameters":   "stop \"<|eot_id|>\"",
		"template":     "{{ .Prompt }}",
		"details":      map[string]any{"format": "gguf", "family": "llama"},
		"model_info":   info,
		"capabilities": []string{"completion", "tools"},
	})
}
