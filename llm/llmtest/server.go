// Package llmtest is an in-process HTTP server that speaks the Anthropic
// Messages API and OpenAI Chat Completions on the wire, JSON and SSE alike, so
// that baton's tests drive the real provider SDKs instead of mocks of baton's
// own interfaces. Each test scripts the answers with rules, and the server
// records every request it received and the usage it reported, so accounting
// can be checked against what a provider would have billed.
//
// Native tool calling is spoken too: tool definitions, assistant tool calls
// and tool results are parsed from both protocols into llm's terms
// (RecordedRequest.Tools, Message.ToolCalls, Message.ToolResults), checked
// with the pairing rules the services enforce, and a Reply with ToolCalls is
// answered as tool_use blocks or tool_calls, in JSON and in streams.
package llmtest

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
)

// Server is a fake model provider. It is safe for concurrent use: parallel
// sub-agents hit it at the same time.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	rules    []*ruleState
	requests []RecordedRequest
	usage    llm.Usage
	seq      int

	latency time.Duration
	tpm     int
	window  []tpmEntry
	// contextWindow, when positive, refuses requests that do not fit it
	// (window.go).
	contextWindow int
	models        []string
	modelContext  int // /api/show's context length (ollama.go)
	noOllama      bool
	now           func() time.Time
	onRequest     func(RecordedRequest)
}

type tpmEntry struct {
	at     time.Time
	tokens int
}

// NewServer starts a server answering with rules and closes it when the test
// ends.
func NewServer(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := New(rules...)
	t.Cleanup(s.Close)
	return s
}

// New starts a server for use outside tests (benchmarks, demos); the caller
// must Close it.
func New(rules ...Rule) *Server {
	s := &Server{now: time.Now, models: []string{"llama3.2:latest"}, modelContext: DefaultModelContextLength}
	s.AddRules(rules...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Close shuts the server down, cancelling requests still waiting on a delay.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the server's root URL, without a trailing slash.
func (s *Server) URL() string { return s.srv.URL }

// AnthropicBaseURL is the base URL for the Anthropic SDK, which appends
// /v1/messages itself.
func (s *Server) AnthropicBaseURL() string { return s.srv.URL }

// OpenAIBaseURL is the base URL for OpenAI-compatible clients, which append
// /chat/completions.
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// AddRules appends rules after the existing ones.
func (s *Server) AddRules(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		s.rules = append(s.rules, &ruleState{rule: r})
	}
}

// SetRules replaces all rules and their use counts.
func (s *Server) SetRules(rules ...Rule) {
	s.mu.Lock()
	s.rules = nil
	s.mu.Unlock()
	s.AddRules(rules...)
}

// SetLatency adds d to every model request, on top of any Reply.Delay, to
// imitate a provider's time to answer.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetTokensPerMinute limits the prompt tokens the server accepts in any
// sliding minute; a request over the limit gets a 429 with retry-after set to
// when enough of the window frees up. 0 removes the limit. Only prompt tokens
// are counted, as Anthropic's input-tokens-per-minute limit does.
func (s *Server) SetTokensPerMinute(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tpm = n
	s.window = nil
}

// SetModels sets the model names listed by GET /api/tags and GET /v1/models.
func (s *Server) SetModels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), names...)
}

// DisableOllama makes GET /api/tags answer 404, as a server that is not
// Ollama would.
func (s *Server) DisableOllama() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noOllama = true
}

// OnRequest registers f to be called with every model request as soon as it
// is parsed, before the reply (and its delay), e.g. to cancel a context at a
// precise moment. f runs on the server's goroutine.
func (s *Server) OnRequest(f func(RecordedRequest)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = f
}

// Requests returns a copy of every model request received, in arrival order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RecordedRequest, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// Count is the number of model requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// TotalUsage is the sum of the usage the server reported, in baton's
// normalised meaning (for OpenAI, input excludes cached tokens).
func (s *Server) TotalUsage() llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// Reset forgets the recorded requests and usage and restarts every rule's
// use count; rules themselves stay.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.usage = llm.Usage{}
	s.window = nil
	for _, r := range s.rules {
		r.uses = 0
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveModel(w, r, Anthropic)
	case r.Method == http.MethodPost && (r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/chat/completions"):
		s.serveModel(w, r, OpenAI)
	case r.Method == http.MethodPost && r.URL.Path == "/api/chat":
		s.serveModel(w, r, Ollama)
	case r.Method == http.MethodPost && r.URL.Path == "/api/show":
		s.serveShow(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/api/tags":
		s.serveTags(w)
	case r.Method == http.MethodGet && (r.URL.Path == "/v1/models" || r.URL.Path == "/models"):
		s.serveModels(w, r)
	default:
		p := OpenAI
		if r.Header.Get("anthropic-version") != "" {
			p = Anthropic
		}
		writeError(w, p, Reply{Status: http.StatusNotFound,
			ErrorMessage: fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path)})
	}
}

func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, p Protocol) {
	rec, err := parseRequest(r, p)
	if err != nil {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeError(w, p, Reply{Status: http.StatusBadRequest, ErrorMessage: err.Error()})
		return
	}
	prompt := promptTokens(rec)
	if p == Ollama {
		// Ollama does not refuse a prompt over its window: it drops the
		// start of it and answers all the same.
		rec.Truncated = prompt+max(rec.MaxTokens, 0) > ollamaWindow(rec)
	}

	s.mu.Lock()
	s.seq++
	rec.seq = s.seq
	latency := s.latency
	onRequest := s.onRequest
	if s.overWindow(prompt, rec.MaxTokens) {
		// The provider refuses it before any model sees it: no rule is used.
		window := s.contextWindow
		s.mu.Unlock()
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeTooLong(w, p, prompt, rec.MaxTokens, window)
		return
	}
	// A request refused by the rate limit never reached "the model", so it
	// does not use up a rule.
	limited, wait := s.admit(prompt)
	var (
		reply   Reply
		respond func(RecordedRequest) Reply
		matched bool
	)
	if !limited {
		reply, respond, matched = s.match(rec)
	}
	s.mu.Unlock()

	if onRequest != nil {
		onRequest(rec.clone())
	}
	if respond != nil {
		reply = respond(rec.clone())
	}
	switch {
	case limited:
		reply = RateLimit(wait)
		reply.ErrorMessage = "llmtest: tokens-per-minute limit reached"
	case !matched:
		reply = Reply{Status: http.StatusInternalServerError, ErrorType: "llmtest_no_rule",
			ErrorMessage: "llmtest: no rule matched " + rec.describe()}
	}

	if reply.Text == "" && len(reply.Pieces) > 0 {
		reply.Text = strings.Join(reply.Pieces, "")
	}
	if !sleep(r.Context(), latency+reply.Delay) {
		rec.Status = 499 // client closed the request, as nginx logs it
		s.record(rec)
		return
	}

	if reply.Status != 0 && reply.Status != http.StatusOK {
		rec.Status = reply.Status
		s.record(rec)
		writeError(w, p, reply)
		return
	}
	if reply.Model == "" {
		reply.Model = rec.Model
	}
	reply.ToolCalls = withIDs(p, rec.seq, reply.ToolCalls)
	usage := computeUsage(reply, prompt)
	rec.Status = http.StatusOK
	if !reply.Garbage {
		rec.Usage = usage
	}
	s.record(rec)
	id := fmt.Sprintf("%s%04d", idPrefix(p), rec.seq)
	switch {
	case reply.Garbage:
		writeGarbage(w, rec.Stream)
	case p == Anthropic && rec.Stream:
		writeAnthropicStream(r.Context(), w, id, reply, usage)
	case p == Anthropic:
		writeAnthropic(w, id, reply, usage)
	case p == Ollama && rec.Stream:
		writeOllamaStream(r.Context(), w, reply, usage)
	case p == Ollama:
		writeOllama(w, reply, usage)
	case rec.Stream:
		writeOpenAIStream(r.Context(), w, id, reply, usage, rec.IncludeUsage)
	default:
		writeOpenAI(w, id, reply, usage)
	}
}

// match finds the first rule for rec. The caller holds s.mu.
func (s *Server) match(rec RecordedRequest) (Reply, func(RecordedRequest) Reply, bool) {
	for _, rs := range s.rules {
		if rs.exhausted() || !rs.rule.matches(&rec) {
			continue
		}
		reply, respond := rs.next()
		return reply, respond, true
	}
	return Reply{}, nil, false
}

// admit applies the tokens-per-minute limit. The caller holds s.mu.
func (s *Server) admit(tokens int) (limited bool, wait time.Duration) {
	if s.tpm <= 0 {
		return false, 0
	}
	now := s.now()
	cut := 0
	for cut < len(s.window) && now.Sub(s.window[cut].at) >= time.Minute {
		cut++
	}
	s.window = s.window[cut:]
	used := 0
	for _, e := range s.window {
		used += e.tokens
	}
	if used+tokens <= s.tpm || (len(s.window) == 0 && tokens > s.tpm) {
		// A single request larger than the whole limit is let through on an
		// empty window; otherwise it could never succeed.
		s.window = append(s.window, tpmEntry{at: now, tokens: tokens})
		return false, 0
	}
	// Wait until enough of the oldest entries leave the window.
	free := s.tpm - used
	for _, e := range s.window {
		free += e.tokens
		if free >= tokens {
			wait = e.at.Add(time.Minute).Sub(now)
			break
		}
	}
	// Whole seconds, rounded up, as real providers send.
	wait = time.Duration(math.Ceil(wait.Seconds())) * time.Second
	if wait <= 0 {
		wait = time.Second
	}
	return true, wait
}

func (s *Server) record(rec RecordedRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	s.usage = s.usage.Add(rec.Usage)
}

// sleep waits d unless ctx ends first; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// withIDs copies calls, giving each call without an ID one in the
// provider's style, unique per server (the request's number and the call's
// place), and an empty input {}.
func withIDs(p Protocol, seq int, calls []llm.ToolCall) []llm.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			if p == Anthropic {
				c.ID = fmt.Sprintf("toolu_llmtest_%04d_%d", seq, i)
			} else {
				c.ID = fmt.Sprintf("call_llmtest_%04d_%d", seq, i)
			}
		}
		c.Input = c.InputJSON()
		out[i] = c
	}
	return out
}

func idPrefix(p Protocol) string {
	if p == Anthropic {
		return "msg_llmtest_"
	}
	return "chatcmpl-llmtest-"
}
