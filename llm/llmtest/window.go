package llmtest

import (
	"fmt"
	"net/http"
)

// SetContextWindow makes the server refuse, with the provider's real 400
// body, every request that does not fit a context window of n tokens: its
// prompt (counted as the reported usage is, see promptTokens) plus its
// max_tokens, which both providers reserve for the reply. A refused request
// is recorded with Status 400 and uses up no rule. 0 removes the window.
//
// The bodies are the ones the services send: Anthropic's
// invalid_request_error "prompt is too long: N tokens > W maximum" (or, when
// only max_tokens tips it over, "input length and `max_tokens` exceed
// context limit"), and OpenAI's invalid_request_error with code
// context_length_exceeded and param messages.
func (s *Server) SetContextWindow(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contextWindow = n
}

// overWindow reports whether a request of prompt tokens asking for
// maxTokens of reply does not fit the window. The caller holds s.mu.
func (s *Server) overWindow(prompt, maxTokens int) bool {
	return s.contextWindow > 0 && prompt+max(maxTokens, 0) > s.contextWindow
}

// writeTooLong writes the provider's answer to a request over the window.
func writeTooLong(w http.ResponseWriter, p Protocol, prompt, maxTokens, window int) {
	if p == Ollama {
		writeOllamaError(w, http.StatusBadRequest, fmt.Sprintf("the input length (%d tokens) exceeds the context length (%d tokens)", prompt+maxTokens, window))
		return
	}
	if p == Anthropic {
		msg := fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, window)
		if prompt <= window {
			msg = fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", prompt, maxTokens, window)
		}
		w.Header().Set("request-id", "req_llmtest_too_long")
		writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
			"error": map[string]any{"type": "invalid_request_error", "message": msg}})
		return
	}
	msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		window, prompt+maxTokens, prompt, maxTokens)
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
}
