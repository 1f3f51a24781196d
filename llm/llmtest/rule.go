package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton/llm"
)

// Protocol names a wire protocol the server speaks.
type Protocol string

const (
	// Anthropic is the Messages API (POST /v1/messages).
	Anthropic Protocol = "anthropic"
	// OpenAI is Chat Completions (POST /v1/chat/completions), the protocol of
	// every OpenAI-compatible server.
	OpenAI Protocol = "openai"
)

// Reply is what the server answers to one request. The zero Reply is a 200
// with empty text.
type Reply struct {
	// Text is the assistant's answer; with ToolCalls, what it says alongside
	// them (often nothing).
	Text string
	// ToolCalls are answered as tool_use blocks (Anthropic) or tool_calls
	// (OpenAI), in JSON and in streams alike. A call without an ID gets one
	// in the provider's style (toolu_… or call_…), unique per server; an
	// empty Input is {}. Input that is not valid JSON imitates a model's
	// slip: OpenAI sends it as the arguments string, an Anthropic stream
	// sends it as the partial JSON (as a stream cut short by max_tokens
	// would), and an Anthropic JSON body sends it as a string value.
	ToolCalls []llm.ToolCall
	// StopReason defaults to "end_turn" (Anthropic) or "stop" (OpenAI), or
	// to "tool_use" / "tool_calls" when the reply has ToolCalls.
	StopReason string
	// Model overrides the model echoed back; the requested model by default.
	Model string
	// Usage, when set, is reported as is (in baton's normalised meaning, see
	// llm.Usage). When nil, input tokens are tokens.Count of everything the
	// model was sent and output tokens tokens.Count of Text, so accounting
	// tests can compare against real counts.
	Usage *llm.Usage

	// Status, when not 0 or 200, makes the reply an error in the provider's
	// own error shape.
	Status int
	// ErrorType is the provider's error type ("rate_limit_error"); derived
	// from Status when empty.
	ErrorType string
	// ErrorMessage is the human-readable message; derived when empty.
	ErrorMessage string
	// Header is added to the response, e.g. retry-after.
	Header http.Header

	// Delay holds the response back; the wait ends early when the client
	// cancels the request.
	Delay time.Duration
	// Garbage answers 200 with a body that is not JSON (or, when streaming, an
	// event stream whose data is not JSON).
	Garbage bool
	// Empty answers 200 with no content blocks (Anthropic) or no choices
	// (OpenAI).
	Empty bool
	// Pieces, when set, are the text deltas of a streamed reply, in order,
	// instead of a few words each; Text is their join when left empty.
	Pieces []string
	// BeforePiece, when set, is called on the server's goroutine before
	// text delta i (0-based) of a streamed reply is written, after delta
	// i-1 was flushed to the client. A test holds the stream there until
	// it has seen the earlier deltas arrive, which proves that they were
	// delivered while the reply was still being written.
	BeforePiece func(i int)
	// Fault makes a streamed reply end early, stall or lose its end marker;
	// see StreamFault and CutAfter, CutMidLine, StallAfter, PingForever and
	// NoEnd.
	Fault StreamFault
}

// Text is a reply with the given answer.
func Text(s string) Reply { return Reply{Text: s} }

// CallTools is a reply that asks for the given tool calls.
func CallTools(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Call is a tool call of name with input given as JSON text; the server
// assigns its ID.
func Call(name, input string) llm.ToolCall {
	return llm.ToolCall{Name: name, Input: json.RawMessage(input)}
}

// Fail is an error reply with the given status, error type and message.
func Fail(status int, errType, msg string) Reply {
	return Reply{Status: status, ErrorType: errType, ErrorMessage: msg}
}

// RateLimit is a 429 asking the client to wait retryAfter. The header is
// written in seconds and may be fractional so that tests stay fast.
func RateLimit(retryAfter time.Duration) Reply {
	h := http.Header{}
	h.Set("retry-after", formatSeconds(retryAfter))
	return Reply{Status: http.StatusTooManyRequests, Header: h}
}

// Overloaded is Anthropic's 529 overloaded_error.
func Overloaded() Reply { return Reply{Status: 529} }

// Garbage is a 200 whose body is not JSON.
func Garbage() Reply { return Reply{Garbage: true} }

// Slow is a reply that arrives after d.
func Slow(d time.Duration, text string) Reply { return Reply{Text: text, Delay: d} }

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Rule matches requests and says how to answer them. The zero value of each
// matcher field matches everything. Rules are tried in order; the first that
// matches and still has uses left answers.
type Rule struct {
	// Protocol restricts the rule to one wire protocol.
	Protocol Protocol
	// System matches when the system prompt contains it.
	System string
	// Contains matches when any message's content, tool call input or tool
	// result content contains it (llm.Message.PromptText).
	Contains string
	// Times limits the rule to that many matching requests; 0 is unlimited.
	Times int

	// Replies answers the i-th matching request with Replies[i]; the last one
	// repeats.
	Replies []Reply
	// Respond, when set, computes the reply from the request instead of
	// Replies, for deterministic echo-style answers.
	Respond func(req RecordedRequest) Reply
}

// Always is a rule that answers every request with r.
func Always(r Reply) Rule { return Rule{Replies: []Reply{r}} }

// Sequence is a rule that answers the i-th request with replies[i], the last
// repeating.
func Sequence(replies ...Reply) Rule { return Rule{Replies: replies} }

// Func is a rule whose reply is computed from the request.
func Func(f func(req RecordedRequest) Reply) Rule { return Rule{Respond: f} }

// Echo answers with the text of the last user message, prefixed by prefix.
func Echo(prefix string) Rule {
	return Func(func(req RecordedRequest) Reply {
		last := ""
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				last = m.Content
			}
		}
		return Text(prefix + last)
	})
}

// ForProtocol returns a copy of r restricted to protocol p.
func (r Rule) ForProtocol(p Protocol) Rule { r.Protocol = p; return r }

// WhenSystem returns a copy of r that matches only when the system prompt
// contains s.
func (r Rule) WhenSystem(s string) Rule { r.System = s; return r }

// WhenContains returns a copy of r that matches only when a message contains s.
func (r Rule) WhenContains(s string) Rule { r.Contains = s; return r }

// Limit returns a copy of r that answers at most n requests.
func (r Rule) Limit(n int) Rule { r.Times = n; return r }

func (r *Rule) matches(req *RecordedRequest) bool {
	if r.Protocol != "" && r.Protocol != req.Protocol {
		return false
	}
	if r.System != "" && !strings.Contains(req.System, r.System) {
		return false
	}
	if r.Contains != "" {
		found := false
		for _, m := range req.Messages {
			if strings.Contains(m.PromptText(), r.Contains) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ruleState is a rule with its use count, owned by the server's mutex.
type ruleState struct {
	rule Rule
	uses int
}

func (rs *ruleState) exhausted() bool { return rs.rule.Times > 0 && rs.uses >= rs.rule.Times }

// next picks the reply for the request that just matched and counts the use.
// A rule with Respond returns it instead, so that user code runs outside the
// server's lock.
func (rs *ruleState) next() (Reply, func(RecordedRequest) Reply) {
	i := rs.uses
	rs.uses++
	if rs.rule.Respond != nil {
		return Reply{}, rs.rule.Respond
	}
	if len(rs.rule.Replies) == 0 {
		return Reply{}, nil
	}
	if i >= len(rs.rule.Replies) {
		i = len(rs.rule.Replies) - 1
	}
	return rs.rule.Replies[i], nil
}
