package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// httpServer is one server on a real loopback listener.
type httpServer struct {
	url  string
	stop context.CancelFunc
	done chan error
}

// serveHTTP serves a root holding doc.md on 127.0.0.1:0 with opts, and
// stops it when the test ends.
func serveHTTP(t *testing.T, addr string, opts mcpserver.HTTPOptions) *httpServer {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := mcpserver.New(mcpserver.Config{Root: dir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &httpServer{stop: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() { hs.done <- s.ListenAndServe(ctx, addr, opts, func(url string) { ready <- url }) }()
	select {
	case hs.url = <-ready:
	case err := <-hs.done:
		t.Fatalf("ListenAndServe %s: %v", addr, err)
	case <-time.After(30 * time.Second):
		t.Fatal("not listening after 30 s")
	}
	t.Cleanup(func() {
		cancel()
		<-hs.done
		s.Close()
	})
	return hs
}

// tokenTransport adds a bearer token to every request.
type tokenTransport struct{ token string }

func (tt tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tt.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: tokenTransport{token}}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
}

// post sends one initialize request as a host would, with extra headers,
// and returns the status and the response's headers.
func post(t *testing.T, url string, header map[string]string) (int, http.Header) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header
}

// An SDK client over Streamable HTTP lists the tools and cuts a slice, on
// a server that asks for a token and is given it.
func TestHTTPListsAndCallsTools(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{Token: "s3cret-token"})
	if !strings.HasPrefix(hs.url, "http://127.0.0.1:") || !strings.HasSuffix(hs.url, "/mcp") || strings.HasSuffix(hs.url, ":0/mcp") {
		t.Fatalf("url %q: want http://127.0.0.1:<the real port>/mcp", hs.url)
	}
	ctx := context.Background()
	cs, err := connectHTTP(ctx, hs.url, "s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "slice") || !strings.Contains(got, "outline") {
		t.Errorf("tools over http: %s", got)
	}
	var out mcpserver.SliceOut
	call(t, cs, "slice", map[string]any{"document": "doc.md", "sections": []string{"Globex > Pricing"}}, &out)
	if !strings.Contains(out.Text, "12 EUR") || strings.Contains(out.Text, "10 EUR") {
		t.Errorf("slice over http: %q", out.Text)
	}
}

// With a token set, a request without it or with another one is refused
// with 401 and a Bearer challenge, and an SDK client without it cannot
// connect; the right token, with the scheme in any case, is let through.
func TestHTTPTokenIsChecked(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{Token: "s3cret-token"})
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-tokenX", "Bearer s3cret-toke", "Basic s3cret-token", "s3cret-token", "Bearer "} {
		code, h := post(t, hs.url, map[string]string{"Authorization": auth})
		if code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q; want 401 and a Bearer challenge", auth, code, h.Get("WWW-Authenticate"))
		}
	}
	for _, auth := range []string{"Bearer s3cret-token", "bearer s3cret-token"} {
		if code, _ := post(t, hs.url, map[string]string{"Authorization": auth}); code != http.StatusOK {
			t.Errorf("Authorization %q: status %d, want 200", auth, code)
		}
	}
	if cs, err := connectHTTP(context.Background(), hs.url, ""); err == nil {
		cs.Close()
		t.Error("an SDK client without the token connected")
	}
}

// A browser's cross-origin request is refused with 403, whether the
// browser says so (Sec-Fetch-Site) or only sends its Origin, and for the
// GET that opens an event stream too; the server's own origin and a client
// that is not a browser pass.
func TestHTTPCrossOriginIsRefused(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{})
	host := strings.TrimSuffix(strings.TrimPrefix(hs.url, "http://"), "/mcp")
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{map[string]string{"Origin": "null"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://" + host}, http.StatusOK},
		{map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{map[string]string{}, http.StatusOK},
	} {
		if code, _ := post(t, hs.url, c.header); code != c.want {
			t.Errorf("POST with %v: status %d, want %d", c.header, code, c.want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, hs.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Origin", "http://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("GET with a foreign Origin: status %d, want 403", res.StatusCode)
	}
}

// A request that reached the loopback server under a Host that is not a
// loopback name (a page whose name was re-pointed at 127.0.0.1) is refused,
// even when its Origin matches that Host; loopback names pass.
func TestHTTPForeignHostIsRefusedOnLoopback(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{})
	port := hs.url[strings.LastIndex(hs.url, ":")+1 : len(hs.url)-len("/mcp")]
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port}, http.StatusForbidden},
		{map[string]string{"Host": "localhost:" + port}, http.StatusOK},
		{map[string]string{"Host": "127.0.0.1:" + port}, http.StatusOK},
	} {
		if code, _ := post(t, hs.url, c.header); code != c.want {
			t.Errorf("POST with %v: status %d, want %d", c.header, code, c.want)
		}
	}
}

// Serving on an address that is not loopback without a token is refused
// before anything listens; an address without a host is loopback; a bad
// address or a token no header can carry is one clear error.
func TestHTTPAddressRules(t *testing.T) {
	s, err := mcpserver.New(mcpserver.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		addr, token, want string
		sentinel          bool
	}{
		{"0.0.0.0:0", "", "not loopback", true},
		{"[::]:0", "", "not loopback", true},
		{":0", "tok en", "space", false},
		{"example.com:0", "", "not loopback", true},
		{"127.0.0.1", "", "HOST:PORT", false},
	} {
		called := false
		err := s.ListenAndServe(context.Background(), c.addr, mcpserver.HTTPOptions{Token: c.token}, func(string) { called = true })
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, mcpserver.ErrTokenRequired) != c.sentinel || called || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q token %q: err %v, listened %v; want one line naming %q", c.addr, c.token, err, called, c.want)
		}
	}
	hs := serveHTTP(t, ":0", mcpserver.HTTPOptions{})
	if !strings.HasPrefix(hs.url, "http://127.0.0.1:") {
		t.Errorf(":0 served at %s, want 127.0.0.1", hs.url)
	}
}

// When ctx ends the server stops: a connected client's open event stream
// does not hold the shutdown for its grace, and nothing listens after.
func TestHTTPStopsWhenContextEnds(t *testing.T) {
	hs := serveHTTP(t, "127.0.0.1:0", mcpserver.HTTPOptions{ShutdownGrace: 10 * time.Minute})
	cs, err := connectHTTP(context.Background(), hs.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	hs.stop()
	select {
	case err := <-hs.done:
		hs.done <- err // for the cleanup
		if err != nil {
			t.Errorf("ListenAndServe after ctx ended: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not stop within 60 s of its context ending (an open event stream held it?)")
	}
	if code, err := http.Get(hs.url); err == nil {
		code.Body.Close()
		t.Errorf("the stopped server still answers: %d", code.StatusCode)
	}
}
