package llm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

// A retry-after too large for a time.Duration, or not a number at all, is
// a wait longer than any cap: baton gives up at once rather than retrying
// quickly.
func TestRetryAfterOverflowGivesUp(t *testing.T) {
	headers := []struct{ name, value string }{
		{"retry-after", "99999999999"},
		{"retry-after", "+Inf"},
		{"retry-after", "-Inf"},
		{"retry-after", "NaN"},
		{"retry-after", "1e300"},
		{"retry-after-ms", "1e300"},
		{"retry-after-ms", "99999999999999999"},
	}
	for _, p := range protocols {
		for _, h := range headers {
			t.Run(string(p)+"/"+h.name+"="+h.value, func(t *testing.T) {
				hdr := http.Header{}
				hdr.Set(h.name, h.value)
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Status: http.StatusTooManyRequests, Header: hdr}))
				var sl sleeps
				m := llm.WithRetry(client(t, s, p), llm.RetryPolicy{Sleep: sl.sleep})
				_, err := m.Generate(context.Background(), request("hi"))
				if !errors.Is(err, llm.ErrRetryAfterTooLong) {
					t.Errorf("error %v, want ErrRetryAfterTooLong", err)
				}
				if s.Count() != 1 || len(sl.waits()) != 0 {
					t.Errorf("server saw %d attempts, baton slept %v; want 1 and none", s.Count(), sl.waits())
				}
			})
		}
	}
}
