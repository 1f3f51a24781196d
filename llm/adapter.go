package llm

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
)

// Helpers the provider adapters share. They live here so that both
// adapters classify failures and hide keys the same way.

// IsTransportError reports whether err is the connection failing rather
// than the body being malformed: a stream cut short is worth retrying, a 200
// with HTML is not.
func IsTransportError(err error) bool {
	var ne net.Error
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se), errors.As(err, &te):
		return false
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.As(err, &ne):
		return true
	}
	return false
}

// Redact masks secret in s. An empty secret leaves s as it is.
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// RedactError returns err, or, when its text holds secret (a provider
// echoing the key back in an error body), a plain error with the secret
// masked. The original error is dropped from the chain in that case on
// purpose: anything that unwrapped it could print the key.
func RedactError(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(Redact(err.Error(), secret))
}
