package llmtest

import (
	"bytes"
	"io"
	"net/http"
)

// PanicTransport is an HTTP transport that panics on every request whose
// body holds marker and passes the others to next (http.DefaultTransport
// when nil): a bug below a provider adapter, on whatever goroutine made
// the call, for tests that a panic there ends one call and not the process.
func PanicTransport(marker string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return panicTransport{marker: []byte(marker), next: next}
}

type panicTransport struct {
	marker []byte
	next   http.RoundTripper
}

func (p panicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, p.marker) {
			panic("llmtest: PanicTransport: a request holds its marker")
		}
	}
	return p.next.RoundTrip(r)
}
