package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where the Streamable HTTP endpoint is served.
const HTTPPath = "/mcp"

// ErrTokenRequired is returned when the server would listen on an address
// that is not loopback without a bearer token: anyone who can reach the
// port could then read every file under the root.
var ErrTokenRequired = errors.New("a bearer token is required to serve on an address that is not loopback")

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	// Token, when not empty, is the bearer token every request must carry
	// (`Authorization: Bearer <token>`); a request without it gets 401.
	Token string
	// ShutdownGrace bounds how long requests in flight may take to finish
	// once the server is told to stop (DefaultShutdownGrace when 0).
	ShutdownGrace time.Duration
}

// DefaultShutdownGrace is how long a stopping server lets calls in flight
// finish before it cuts their connections.
const DefaultShutdownGrace = 5 * time.Second

// sessionTimeout closes a session no request has touched for this long: a
// host that vanished without a DELETE would otherwise hold its session (and
// its goroutines) for the life of the server.
const sessionTimeout = 30 * time.Minute

// HTTPHandler serves the server at HTTPPath over the Streamable HTTP
// transport, with the checks a local server needs against a browser: a
// request that reached a loopback address with a Host that is not a
// loopback name is refused with 403 (DNS rebinding: a page whose name was
// re-pointed at 127.0.0.1), and a browser's cross-origin request is refused
// with 403. When opts.Token is set every request must also carry it.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	// The SDK's handler refuses a non-loopback Host on a loopback
	// connection by itself (DisableLocalhostProtection left false).
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout})
	h = checkBodies(h)
	if opts.Token != "" {
		h = requireToken(opts.Token, h)
	}
	h = sameOrigin(h)
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, h)
	return mux
}

// checkBodies answers a POST whose body is not a JSON-RPC message (or
// batch) with 400 and the JSON-RPC error in the body (-32700 when it is
// not JSON, -32600 when it is not JSON-RPC): the SDK answers such a body in
// plain text, which a client cannot read as an answer. A body over
// MaxHTTPBodyBytes gets 413 and -32600 without being read further, as the
// SDK would refuse it (in plain text). The session, if any, is not touched,
// and later requests are served as before.
func checkBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxHTTPBodyBytes))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeRPCError(w, http.StatusRequestEntityTooLarge, tooLarge(MaxHTTPBodyBytes))
			return
		case err != nil:
			http.Error(w, "failed to read the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		// An empty body is left to the SDK, which says a POST needs one.
		if len(bytes.TrimSpace(body)) > 0 {
			if _, _, reject := checkMessage(body); reject != nil {
				writeRPCError(w, http.StatusBadRequest, reject)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func writeRPCError(w http.ResponseWriter, status int, e *rpcError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(e.line(), '\n'))
}

// sameOrigin refuses a browser's cross-origin request with Go's
// CrossOriginProtection (Sec-Fetch-Site, else Origin against Host). That
// check lets safe methods through, but the MCP specification asks for the
// Origin of every connection to be checked, the GET that opens a session's
// event stream too, so every method is checked as if it were a POST.
// Clients that are not browsers send neither header and pass.
func sameOrigin(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r
		if r.Method != http.MethodPost {
			probe = r.Clone(r.Context())
			probe.Method = http.MethodPost
		}
		if err := cop.Check(probe); err != nil {
			http.Error(w, "forbidden: a cross-origin request ("+err.Error()+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireToken lets through only requests that carry the bearer token. The
// SDK's auth.RequireBearerToken is built for OAuth tokens (it wants an
// expiry and sends no challenge without resource metadata); one shared
// secret needs only this. The two values are hashed before the
// constant-time compare so that neither the token nor its length leaks
// through timing.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="baton"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer is the token of an `Authorization: Bearer <token>` header (the
// scheme is case-insensitive, RFC 9110).
func bearer(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// IsLoopback reports whether host (a name or an IP, without a port) is a
// loopback address. Only "localhost" counts among names: another name may
// resolve anywhere.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// ListenAndServe serves the server over Streamable HTTP on addr (HOST:PORT;
// an empty HOST is 127.0.0.1, so that exposing the server is always asked
// for by name) until ctx ends, then stops gracefully: no new connection is
// taken, calls in flight get opts.ShutdownGrace to finish, and open event
// streams are ended. ready, when not nil, is called once with the endpoint's
// URL (the real port when PORT is 0) as soon as the server is listening.
// An address that is not loopback is refused with ErrTokenRequired unless
// opts.Token is set.
func (s *Server) ListenAndServe(ctx context.Context, addr string, opts HTTPOptions, ready func(url string)) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("http address %q: want HOST:PORT, such as 127.0.0.1:8765", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !IsLoopback(host) && opts.Token == "" {
		return fmt.Errorf("http address %q is not loopback: %w", addr, ErrTokenRequired)
	}
	if strings.ContainsFunc(opts.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("the bearer token holds a space or a control character, which no Authorization header can carry")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("http address %q: %w", addr, err)
	}
	url := "http://" + ln.Addr().String() + HTTPPath

	// An event stream (a session's GET) never goes idle, so Shutdown would
	// wait the whole grace for it: streams get a context that ends when the
	// shutdown starts, while POSTs (tool calls) run to their answer.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	h := s.HTTPHandler(opts)
	srv := &http.Server{
		// No write timeout: an event stream lasts as long as its session.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				rctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				defer context.AfterFunc(streams, cancel)()
				r = r.WithContext(rctx)
			}
			h.ServeHTTP(w, r)
		}),
	}
	srv.RegisterOnShutdown(endStreams)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(url)
	}
	select {
	case err := <-served:
		return fmt.Errorf("serving %s: %w", url, err)
	case <-ctx.Done():
	}
	grace := opts.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		srv.Close() // the grace is over: cut what is left
	}
	<-served
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping %s: %w", url, err)
	}
	return nil
}
