package llm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/baton-dev/baton/llm"
)

func TestErrPromptTooLong(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  *llm.ProviderError
		want bool
	}{
		{"anthropic prompt too long", &llm.ProviderError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, true},
		{"anthropic input and max_tokens", &llm.ProviderError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000, decrease input length or `max_tokens` and try again"}, true},
		{"anthropic request too large", &llm.ProviderError{Provider: "anthropic", StatusCode: 413, Type: "request_too_large", Message: "Request exceeds the maximum size"}, true},
		{"openai code", &llm.ProviderError{Provider: "openai", StatusCode: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."}, true},
		{"compatible server without a code", &llm.ProviderError{Provider: "openai", StatusCode: 400, Message: "This model's maximum context length is 8192 tokens"}, true},
		{"another bad request", &llm.ProviderError{Provider: "openai", StatusCode: 400, Type: "invalid_request_error", Message: "max_tokens must be positive"}, false},
		{"a rate limit", &llm.ProviderError{Provider: "anthropic", StatusCode: 429, Type: "rate_limit_error", Message: "prompt is too long for your rate limit"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("step 1: %w", tt.err)
			if got := errors.Is(wrapped, llm.ErrPromptTooLong); got != tt.want {
				t.Errorf("errors.Is(ErrPromptTooLong) = %v, want %v", got, tt.want)
			}
			if tt.want && tt.err.IsRetryable() {
				t.Error("a prompt too long is retryable; sending it again cannot help")
			}
		})
	}
}
