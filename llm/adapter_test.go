package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestIsTransportError(t *testing.T) {
	err := json.Unmarshal([]byte("<html>"), &struct{}{})
	cases := []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read body: %w", io.EOF), true},
		{err, false},
		{errors.New("something else"), false},
	}
	for _, tc := range cases {
		if got := IsTransportError(tc.err); got != tc.want {
			t.Errorf("IsTransportError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	const key = "sk-abc123"
	if got := Redact("bad key sk-abc123 given", key); strings.Contains(got, key) {
		t.Errorf("Redact left the key: %q", got)
	}
	if got := Redact("text", ""); got != "text" {
		t.Errorf("Redact with no key = %q", got)
	}
	inner := errors.New("invalid x-api-key sk-abc123")
	wrapped := fmt.Errorf("call: %w", inner)
	red := RedactError(wrapped, key)
	if strings.Contains(red.Error(), key) || errors.Is(red, inner) {
		t.Errorf("RedactError kept the key reachable: %v", red)
	}
	clean := errors.New("no key here")
	if RedactError(clean, key) != clean {
		t.Error("RedactError replaced an error that held no key")
	}
}
