package llm

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
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
	// Code is the provider's finer error code when it sends one apart from
	// the type (OpenAI's "context_length_exceeded").
	Code    string
	Message string
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

// ErrPromptTooLong matches (errors.Is) a provider's answer that the request
// does not fit the model's context window. Sending it again cannot help, so
// it is never retried; a caller that can shrink the context (a reset to a
// fresh session) branches on it.
var ErrPromptTooLong = errors.New("the prompt is too long for the model's context window")

// Is makes a provider's "prompt too long" answer match ErrPromptTooLong.
func (e *ProviderError) Is(target error) bool {
	return target == ErrPromptTooLong && e.promptTooLong()
}

// promptTooLong recognises both providers' real answers: Anthropic's 400
// invalid_request_error "prompt is too long: 210000 tokens > 200000 maximum"
// (or "input length and `max_tokens` exceed context limit") and its 413
// request_too_large, and OpenAI's 400 with code context_length_exceeded
// ("This model's maximum context length is ..."), which compatible servers
// often send without the code.
func (e *ProviderError) promptTooLong() bool {
	switch {
	case e.StatusCode == http.StatusRequestEntityTooLarge:
		return true
	case e.StatusCode != http.StatusBadRequest:
		return false
	case e.Code == "context_length_exceeded" || e.Type == "context_length_exceeded":
		return true
	}
	m := strings.ToLower(e.Message)
	for _, s := range []string{"prompt is too long", "maximum context length", "exceed context limit", "context window"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

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
// present or parseable, or when the wait asked for is negative or already
// past.
//
// A number too large for a time.Duration, and one that is not finite (NaN,
// ±Inf), is a wait longer than any cap, so that RetryPolicy.MaxRetryAfter
// ends the retries at once. Taking it for 0 would do the opposite of what the
// provider asked: retry at full speed.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil || isRangeErr(err) {
			return scaled(ms, time.Millisecond)
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil || isRangeErr(err) {
		return scaled(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// retryAfterForever is what an unrepresentable retry-after becomes.
const retryAfterForever = time.Duration(math.MaxInt64)

// scaled is v units as a Duration, saturating instead of overflowing: a
// float64 beyond the int64 range converts to an undefined value, in practice
// a negative one.
func scaled(v float64, unit time.Duration) time.Duration {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return retryAfterForever
	case v <= 0:
		return 0
	}
	d := v * float64(unit)
	if d >= float64(math.MaxInt64) {
		return retryAfterForever
	}
	return time.Duration(d)
}

// isRangeErr reports a number too large for a float64 ("1e400"), which
// ParseFloat returns as ±Inf with this error.
func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

// Incomplete is the error for a response that ended before the provider
// said it was complete: a stream cut short by a proxy, a load balancer or a
// server that gave up, which ends the body cleanly but without its end
// marker. Its StatusCode is 0, a transport failure, so it is retried; a half
// answer is never returned as a whole one. It matches ErrIncomplete.
func Incomplete(provider, msg string) *ProviderError {
	return &ProviderError{Provider: provider, Type: "incomplete_response", Message: msg, Err: ErrIncomplete}
}

// TransportMessage is the text of a transport failure for a ProviderError:
// a baton timeout says only what expired (the URL the HTTP client prefixes
// adds nothing), anything else is err's own text.
func TransportMessage(err error) string {
	var te *TimeoutError
	if errors.As(err, &te) {
		return te.Error()
	}
	return err.Error()
}
