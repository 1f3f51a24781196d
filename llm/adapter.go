package llm

import (
	"encoding/json"
	"errors"
	"io"
	"net"
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

// Redact masks secret in s by the Redactor's rules: a value shorter than
// minSecret is left alone, a short one is masked only where it stands alone
// (a key "k" must not turn "tokens" into "to[redacted]ens" in a provider's
// "prompt is too long" message), a long one wherever it appears.
func Redact(s, secret string) string {
	if len(secret) < minSecret {
		return s
	}
	return replaceSecret(s, secret)
}

// RedactError returns err, or, when its text holds secret (a provider
// echoing the key back in an error body), a plain error with the secret
// masked. The original error is dropped from the chain in that case on
// purpose: anything that unwrapped it could print the key.
func RedactError(err error, secret string) error {
	msg := err.Error()
	masked := Redact(msg, secret)
	if masked == msg {
		return err
	}
	return errors.New(masked)
}
