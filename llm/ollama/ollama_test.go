package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/ollama"
)

func newModel(t *testing.T, s *llmtest.Server, numCtx int) *ollama.Model {
	t.Helper()
	m, err := ollama.New(ollama.Config{BaseURL: s.URL(), Model: "llama3.2:latest", NumCtx: numCtx})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ask(text string) *llm.Request {
	return &llm.Request{System: "You are a careful analyst.", MaxTokens: 100, Temperature: llm.Float(0.2),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// Every request names the window in options.num_ctx, on the native API,
// streamed or not, and usage is the server's prompt_eval_count and
// eval_count.
func TestNumCtxOnEveryRequest(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("The outage lasted 3 h 42 min.")))
		req := ask("How long was the outage?")
		req.Stream = stream
		resp, err := newModel(t, s, 32768).Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Requests()[0]
		if r.Path != "/api/chat" || r.NumCtx != 32768 || r.Stream != stream || r.MaxTokens != 100 || r.System != "You are a careful analyst." {
			t.Errorf("stream %v: request %s num_ctx %d stream %v max %d system %q", stream, r.Path, r.NumCtx, r.Stream, r.MaxTokens, r.System)
		}
		if r.Temperature == nil || *r.Temperature != 0.2 {
			t.Errorf("temperature %v", r.Temperature)
		}
		if resp.Text != "The outage lasted 3 h 42 min." || resp.StopReason != "stop" {
			t.Errorf("response %+v", resp)
		}
		if resp.Usage != s.TotalUsage() || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
			t.Errorf("usage %+v, server reported %+v", resp.Usage, s.TotalUsage())
		}
	}
}

// Without num_ctx the server runs at its default window and silently drops
// what does not fit; with the window baton checks, the same prompt fits.
func TestLongPromptFitsOnlyWithNumCtx(t *testing.T) {
	long := strings.Repeat("The pool ran out of connections during the retry storm. ", 800)
	for _, tc := range []struct {
		numCtx    int
		truncated bool
	}{{0, true}, {32768, false}} {
		s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
		if _, err := newModel(t, s, tc.numCtx).Generate(context.Background(), ask(long)); err != nil {
			t.Fatal(err)
		}
		if got := s.Requests()[0].Truncated; got != tc.truncated {
			t.Errorf("num_ctx %d: truncated %v, want %v", tc.numCtx, got, tc.truncated)
		}
	}
}

// OnText gets the pieces while the reply is written; a stream that ends
// before its done line is an incomplete answer, retried.
func TestStreamedTextAndCutStream(t *testing.T) {
	pieces := []string{"one ", "two ", "three ", "four"}
	s := llmtest.NewServer(t, llmtest.Sequence(llmtest.CutAfter(2, llmtest.Reply{Pieces: pieces}), llmtest.Reply{Pieces: pieces}))
	m := llm.WithRetry(newModel(t, s, 8192), llm.RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
	var got []string
	req := ask("count")
	req.OnText = func(d string) { got = append(got, d) }
	req.OnRestart = func() { got = append(got, "|") }
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "one two |one two three four" || resp.Text != "one two three four" {
		t.Errorf("deltas %q, text %q", got, resp.Text)
	}

	s = llmtest.NewServer(t, llmtest.Always(llmtest.CutAfter(2, llmtest.Reply{Pieces: pieces})))
	_, err = newModel(t, s, 8192).Generate(context.Background(), req)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !pe.IsRetryable() || !errors.Is(err, llm.ErrIncomplete) {
		t.Errorf("cut stream: %v, want a retryable incomplete answer", err)
	}
}

// Tool definitions, calls and results go the native way: calls without
// IDs get one each, and a result names its tool.
func TestToolsRoundTrip(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Sequence(
		llmtest.CallTools(llmtest.Call("read_file", `{"path":"a.md"}`)),
		llmtest.Text("done")))
	m := newModel(t, s, 8192)
	req := ask("read a.md")
	req.Tools = []llm.Tool{{Name: "read_file", Description: "Read a file", Schema: map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID == "" || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[0].InputJSON()) != `{"path":"a.md"}` {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleUser, ToolResults: []llm.ToolResult{{CallID: resp.ToolCalls[0].ID, Content: "# A"}}})
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	second := s.Requests()[1]
	if names := second.ToolNames(); len(names) != 1 || names[0] != "read_file" {
		t.Errorf("tools %v", names)
	}
	res := second.ToolResults()
	if len(res) != 1 || res[0].CallID != "read_file" || res[0].Content != "# A" {
		t.Errorf("results %+v (the tool name travels as tool_name)", res)
	}
	if calls := second.ToolCalls(); len(calls) != 1 || string(calls[0].InputJSON()) != `{"path":"a.md"}` {
		t.Errorf("calls sent back %+v", calls)
	}
}

// A JSON schema is sent as format; errors keep their status, and a 429's
// retry-after reaches the retry policy.
func TestFormatAndErrors(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"ok":true}`)))
	req := ask("plan")
	req.JSONSchema = &llm.Schema{Name: "plan", Schema: map[string]any{"type": "object"}}
	if _, err := newModel(t, s, 0).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var format map[string]any
	if err := json.Unmarshal(s.Requests()[0].ResponseFormat, &format); err != nil || format["type"] != "object" {
		t.Errorf("format %s", s.Requests()[0].ResponseFormat)
	}
	if s.Requests()[0].NumCtx != 0 {
		t.Error("num_ctx sent with NumCtx 0")
	}

	for _, tc := range []struct {
		reply     llmtest.Reply
		status    int
		retryable bool
	}{
		{llmtest.RateLimit(2 * time.Second), http.StatusTooManyRequests, true},
		{llmtest.Fail(http.StatusNotFound, "", "model 'x' not found"), http.StatusNotFound, false},
		{llmtest.Fail(http.StatusInternalServerError, "", "runner crashed"), http.StatusInternalServerError, true},
	} {
		s := llmtest.NewServer(t, llmtest.Always(tc.reply))
		_, err := newModel(t, s, 0).Generate(context.Background(), ask("x"))
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.StatusCode != tc.status || pe.IsRetryable() != tc.retryable || pe.Provider != "ollama" {
			t.Errorf("%d: %v", tc.status, err)
			continue
		}
		if tc.status == http.StatusTooManyRequests && pe.RetryAfter != 2*time.Second {
			t.Errorf("retry-after %v", pe.RetryAfter)
		}
		if tc.status == http.StatusNotFound && !strings.Contains(pe.Message, "not found") {
			t.Errorf("message %q", pe.Message)
		}
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	if _, err := ollama.New(ollama.Config{BaseURL: "127.0.0.1:11434"}); err == nil {
		t.Error("a base URL without a scheme was accepted")
	}
}
