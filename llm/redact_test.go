package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://api.anthropic.com", "https://api.anthropic.com"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://127.0.0.1:8080/v1beta/openai/chat/completions", "http://127.0.0.1:8080/v1beta/openai/chat/completions"},
		// url.Parse refuses the port; the scrub is textual.
		{"https://user:sk-ant-SECRET@host:99999x/", "https://[redacted]@host:99999x/"},
		{"https://gw.example/t0k3n-abcdef0123456789/v1", "https://gw.example/[redacted]/v1"},
		{"https://gw.example/v1?key=SECRET&api-version=2024-02-01", "https://gw.example/v1?key=[redacted]&api-version=[redacted]"},
		{"https://gw.example/v1?SECRET", "https://gw.example/v1?[redacted]"},
		{"https://x.openai.azure.com/openai/deployments/gpt-4o", "https://x.openai.azure.com/openai/deployments/[redacted]"},
		{"https://gw/AbcDefGhi/v1#frag", "https://gw/[redacted]/v1#[redacted]"},
		{"gpu-box:11434/proxy/Tok9", "gpu-box:11434/proxy/[redacted]"},
		{"user:pa ss@host:1", "[redacted]@host:1"},
	}
	for _, tc := range cases {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScrubURLsInText(t *testing.T) {
	in := `after 2 attempts: openai: Post "https://bob@gw.example/t0k3n-abcdef0123/v1/chat/completions?key=QQQ": dial tcp 10.0.0.1:443: connection refused (see https://docs.example.com/errors/rate-limits.)`
	want := `after 2 attempts: openai: Post "https://[redacted]@gw.example/[redacted]/v1/chat/completions?key=[redacted]": dial tcp 10.0.0.1:443: connection refused (see https://docs.example.com/errors/rate-limits.)`
	if got := ScrubURLs(in); got != want {
		t.Errorf("ScrubURLs:\n got %s\nwant %s", got, want)
	}
	if got := ScrubURLs(want); got != want {
		t.Errorf("ScrubURLs is not idempotent: %s", got)
	}
	if s := "no URL here: 127.0.0.1:80"; ScrubURLs(s) != s {
		t.Errorf("ScrubURLs changed %q", s)
	}
}

func TestRedactorSecrets(t *testing.T) {
	base := "https://gw.example/t0k3n-abcdef0123456789/v1?key=Q%2BSECRET"
	r := NewRedactor(append(URLSecrets(base), "sk-live-0123456789")...)
	in := "echo: key sk-live-0123456789, token t0k3n-abcdef0123456789 and Q+SECRET, escaped Q%2BSECRET"
	got := r.Text(in)
	for _, sec := range []string{"sk-live", "t0k3n", "Q+SECRET", "Q%2BSECRET"} {
		if strings.Contains(got, sec) {
			t.Errorf("Text left %q: %s", sec, got)
		}
	}
	if !strings.Contains(got, "echo: key [redacted]") {
		t.Errorf("Text mangled the message: %s", got)
	}
	// A short secret is masked where it stands alone, not inside words.
	short := NewRedactor("tok5")
	if got := short.Text("max_tok5s tok5."); got != "max_tok5s [redacted]." {
		t.Errorf("short secret: %q", got)
	}
	for _, form := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(form, r); strings.Contains(out, "sk-live") || strings.Contains(out, "t0k3n") {
			t.Errorf("%s of a Redactor shows a secret: %s", form, out)
		}
	}
	var none *Redactor
	if got := none.Text("https://u:p@h/v1?k=v"); got != "https://[redacted]@h/v1?k=[redacted]" {
		t.Errorf("nil Redactor: %q", got)
	}
}

func TestRedactorErrorKeepsWhatRetryNeeds(t *testing.T) {
	r := NewRedactor("sk-live-0123456789")
	inner := fmt.Errorf("invalid key sk-live-0123456789: %w", context.DeadlineExceeded)
	pe := &ProviderError{Provider: "anthropic", StatusCode: 429, Type: "rate_limit_error",
		Message: "slow down, sk-live-0123456789", RetryAfter: 3 * time.Second, Err: inner}
	for _, err := range []error{pe, fmt.Errorf("after 2 attempts: %w", pe)} {
		red := r.Error(err)
		if strings.Contains(red.Error(), "sk-live") {
			t.Errorf("masked error shows the key: %v", red)
		}
		var got *ProviderError
		if !errors.As(red, &got) {
			t.Fatalf("masked %T is not a *ProviderError", red)
		}
		if got == pe || got.StatusCode != 429 || got.Type != "rate_limit_error" || got.RetryAfter != 3*time.Second || !got.IsRetryable() {
			t.Errorf("masked ProviderError = %+v", got)
		}
		if strings.Contains(got.Message, "sk-live") || strings.Contains(got.Err.Error(), "sk-live") {
			t.Errorf("the copy still holds the key: %q / %q", got.Message, got.Err)
		}
		if !errors.Is(red, context.DeadlineExceeded) {
			t.Error("errors.Is lost the cause")
		}
		if errors.Is(red, inner) && errors.Unwrap(got.Err) != nil {
			t.Error("the original error is still reachable by unwrapping")
		}
	}
	clean := errors.New("nothing secret")
	if r.Error(clean) != clean {
		t.Error("an error with nothing to mask was replaced")
	}
	if r.Error(nil) != nil {
		t.Error("nil error became non-nil")
	}
}

// The providers' own masking follows the same rules: a short key does not
// eat into the words of an error message.
func TestRedactShortKeyLeavesWords(t *testing.T) {
	msg := "prompt is too long: 19116 tokens > 12000 maximum"
	for _, key := range []string{"k", "ke", "ok"} {
		if got := Redact(msg, key); got != msg {
			t.Errorf("Redact(%q) = %q", key, got)
		}
	}
	if got := Redact("bad key sk-abc: sk-abcdefgh", "sk-abcdefgh"); got != "bad key sk-abc: [redacted]" {
		t.Errorf("long key: %q", got)
	}
	if got := Redact("key abc rejected; abcd kept", "abc"); got != "key [redacted] rejected; abcd kept" {
		t.Errorf("short key: %q", got)
	}
}
