package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ErrNoProvider is returned when no provider is configured by flags or the
// environment. Callers branch on it to fall back to a dry run.
var ErrNoProvider = errors.New("no model provider configured")

// ProviderError is an error answered by a provider's HTTP API (or a response
// that could not be understood). It carries what the retry policy needs.
type ProviderError struct {
	Provider   string // "anthropic", "openai"
	StatusCode int    // HTTP status; 0 when the transport failed or the body was garbage
	Type       string // the provider's error type, e.g. "rate_limit_error", when given
	Message    string
	// RetryAfter is the wait the provider asked for (retry-after or
	// retry-after-ms header); 0 when it asked for none.
	RetryAfter time.Duration
	Err        error // the underlying SDK or transport error, for errors.As
}

func (e *ProviderError) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, msg)
	}
	return fmt.Sprintf("%s: %s", e.Provider, msg)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// IsRetryable reports whether the same request may succeed if sent again:
// request timeout, conflict, rate limit, server errors and Anthropic's
// "overloaded" 529. A status of 0 means a transport failure (connection reset,
// truncated body), which is retryable too.
func (e *ProviderError) IsRetryable() bool {
	switch {
	case e.StatusCode == 0:
		return true
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode == http.StatusConflict,
		e.StatusCode == http.StatusTooManyRequests, e.StatusCode >= 500:
		return true
	}
	return false
}

// ParseRetryAfter reads retry-after-ms (milliseconds, used by OpenAI) or
// retry-after (seconds or an HTTP date) from h. It returns 0 when neither is
// present or parseable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
