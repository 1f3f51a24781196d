package llmtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Gateway stands in for an API gateway in front of a Server: the kind of
// endpoint whose base URL carries a token in its path or query string. It
// records every request as it arrived on the wire (path, query, headers and
// body) and forwards it to the Server with Prefix cut from the path, so the
// Server's routes still match. A hook set with Intercept may answer a request
// itself instead: an error that quotes the URL, or a reset connection.
type Gateway struct {
	srv     *httptest.Server
	backend *Server
	prefix  string

	mu        sync.Mutex
	seen      []GatewayRequest
	intercept func(w http.ResponseWriter, r *http.Request, body []byte) bool
}

// GatewayRequest is one request as the gateway received it.
type GatewayRequest struct {
	Path     string
	RawQuery string
	Header   http.Header
	Body     string
}

// NewGateway starts a gateway forwarding to backend and closes it when the
// test ends. prefix is the path the gateway expects before the provider's
// own path ("/t0k3n/v1" style); "" forwards every path as it is.
func NewGateway(t testing.TB, backend *Server, prefix string) *Gateway {
	t.Helper()
	g := &Gateway{backend: backend, prefix: strings.TrimRight(prefix, "/")}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serveHTTP))
	t.Cleanup(func() {
		g.srv.CloseClientConnections()
		g.srv.Close()
	})
	return g
}

// URL is the gateway's root URL, without a trailing slash.
func (g *Gateway) URL() string { return g.srv.URL }

// Intercept sets f to see every request before it is forwarded; when f
// returns true it has answered the request and nothing is forwarded.
func (g *Gateway) Intercept(f func(w http.ResponseWriter, r *http.Request, body []byte) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.intercept = f
}

// Seen returns every request received, in arrival order.
func (g *Gateway) Seen() []GatewayRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GatewayRequest(nil), g.seen...)
}

func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.seen = append(g.seen, GatewayRequest{Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)})
	hook := g.intercept
	g.mu.Unlock()
	if hook != nil && hook(w, r, body) {
		return
	}
	if !strings.HasPrefix(r.URL.Path, g.prefix+"/") {
		http.Error(w, "the gateway serves only "+g.prefix+"/", http.StatusNotFound)
		return
	}
	target, _ := url.Parse(g.backend.URL())
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.URL.Path = strings.TrimPrefix(r.URL.Path, g.prefix)
		pr.Out.URL.RawPath = ""
		pr.Out.URL.RawQuery = ""
	}}
	r.Body = io.NopCloser(bytes.NewReader(body))
	proxy.ServeHTTP(w, r)
}

// ResetConnection answers a request by closing its connection without a
// response, as a proxy that drops the line would. It reports whether the
// connection could be taken over.
func ResetConnection(w http.ResponseWriter) bool {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
