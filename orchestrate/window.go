package orchestrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

// WindowMargin is the share added to every local prompt count before it is
// compared with a window. baton counts with one tiktoken encoding; a
// provider's own tokenizer may count the same text higher (Anthropic's does,
// by a few percent on English prose), and the request carries framing (roles,
// a JSON schema) that the count leaves out. A request is sent only when
//
//	counted + ceil(counted × WindowMargin) + max_tokens <= window
//
// so that max_tokens, which both providers reserve for the reply, fits too.
const WindowMargin = 0.10

// ErrWindow matches (errors.Is) a request that baton did not send because it
// would not fit its model's context window.
var ErrWindow = errors.New("the request would not fit the model's context window")

// WindowError is a request refused before it was sent.
type WindowError struct {
	What      string // "planner", "plan repair", "subtask 3", "synthesis"
	Model     string
	Prompt    int // local count of system prompt and messages
	MaxTokens int // reserved for the reply
	Window    int
	// Source is how the window was found: WindowKnown, WindowOverride or
	// WindowAssumed.
	Source string
}

func (e *WindowError) Error() string {
	assumed := ""
	if e.Source == WindowAssumed {
		assumed = " (assumed: the model is not known; set --window)"
	}
	return fmt.Sprintf("%s request not sent: %d prompt tokens + %d margin + %d for the reply exceed the %d-token window of %s%s",
		e.What, e.Prompt, margin(e.Prompt), e.MaxTokens, e.Window, modelLabel(e.Model), assumed)
}

func (e *WindowError) Is(target error) bool { return target == ErrWindow }

// Where a model's window came from, as ModelWindow.Source says.
const (
	WindowKnown    = "known"    // tokens.Window knows the model
	WindowOverride = "override" // Config.Window (--window)
	WindowAssumed  = "assumed"  // unknown model: tokens.DefaultWindow
)

// ModelWindow is the window a run checked one model's requests against.
type ModelWindow struct {
	Model  string `json:"model"`
	Tokens int    `json:"tokens"`
	Source string `json:"source"`
}

// modelLabel names a model in a message: quoted, or, in a dry run with no
// model named, as what it is.
func modelLabel(model string) string {
	if model == "" {
		return "the unnamed model"
	}
	return fmt.Sprintf("%q", model)
}

func margin(n int) int { return int(math.Ceil(float64(n) * WindowMargin)) }

// fitsWindow reports whether a prompt of n counted tokens with maxTokens of
// reply fits window.
func fitsWindow(n, maxTokens, window int) bool {
	return n+margin(n)+max(maxTokens, 0) <= window
}

// window returns the window of model, recording it in the run's record the
// first time it is asked for.
func (r *run) window(model string) ModelWindow {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.rec.Windows {
		if w.Model == model {
			return w
		}
	}
	n, known := tokens.Window(model, r.cfg.Window)
	w := ModelWindow{Model: model, Tokens: n, Source: WindowKnown}
	switch {
	case r.cfg.Window > 0:
		w.Source = WindowOverride
	case !known:
		w.Source = WindowAssumed
	}
	r.rec.Windows = append(r.rec.Windows, w)
	return w
}

// fits checks one request of n counted prompt tokens against its model's
// window; the error is a *WindowError.
func (r *run) fits(what string, req *llm.Request, n int) error {
	w := r.window(req.Model)
	if fitsWindow(n, req.MaxTokens, w.Tokens) {
		return nil
	}
	return &WindowError{What: what, Model: req.Model, Prompt: n, MaxTokens: req.MaxTokens, Window: w.Tokens, Source: w.Source}
}

// requestTokens counts what a request sends: its system prompt and messages
// (one that holds the whole context reuses its count: see count.go).
func (r *run) requestTokens(req *llm.Request) int {
	n := r.promptTokens(req.System)
	for _, m := range req.Messages {
		n += r.promptTokens(m.Content)
	}
	return n
}
