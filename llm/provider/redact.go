package provider

import (
	"context"
	"net/http"
	"net/url"

	"github.com/baton-dev/baton/llm"
)

// redacting is the layer Resolve puts around every provider client: each
// error it returns is masked with the selection's whole secret set before
// anything (the retry policy's messages, a run record, a synthesis prompt)
// can quote it. Responses are the model's own words and pass unchanged.
type redacting struct {
	m   llm.Model
	red *llm.Redactor
}

func (r redacting) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := r.m.Generate(ctx, req)
	return resp, r.red.Error(err)
}

// withQuery returns a client that adds query to every request whose URL
// does not already set those names. The SDKs resolve each request path
// against the base URL, which drops the base URL's query string; a gateway
// that takes its token there (?key=...) or an endpoint that needs
// ?api-version= would otherwise be sent requests without it.
func withQuery(hc *http.Client, query url.Values) *http.Client {
	if len(query) == 0 {
		return hc
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &queryTransport{rt: rt, query: query}
	return &c
}

type queryTransport struct {
	rt    http.RoundTripper
	query url.Values
}

func (t *queryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the request it was given.
	out := req.Clone(req.Context())
	q := out.URL.Query()
	for k, vs := range t.query {
		if !q.Has(k) {
			q[k] = vs
		}
	}
	out.URL.RawQuery = q.Encode()
	return t.rt.RoundTrip(out)
}
