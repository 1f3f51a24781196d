package bench

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// ModelName is the model every benchmark asks the fake for. It selects the
// o200k_base counter and a 1024-token minimum for prompt caching.
const ModelName = "claude-sonnet-4-5"

// Markers that tell the fake which phase a request belongs to; they are
// phrases of orchestrate's and plan's own system prompts.
const (
	plannerMarker   = "You are the planner of baton"
	outlineMarker   = "you are given its outline instead"
	synthesisMarker = "You are the synthesis step"
)

// newFake starts a fake provider that answers the planner with planReply,
// each sub-agent with a deterministic answer that depends only on its
// subtask (so that every variant of a run gets the same results and the
// same synthesis prompt), and the synthesis with a fixed-length answer.
func newFake(planReply string) *llmtest.Server {
	return llmtest.New(
		llmtest.Always(llmtest.Text(planReply)).WhenSystem(plannerMarker),
		llmtest.Always(llmtest.Text(filler("synthesis", 220))).WhenSystem(synthesisMarker),
		llmtest.Func(func(req llmtest.RecordedRequest) llmtest.Reply {
			return llmtest.Text(filler(subtaskOf(req), 160))
		}),
	)
}

// subtaskOf finds the subtask line of a sub-agent prompt.
func subtaskOf(req llmtest.RecordedRequest) string {
	for _, m := range req.Messages {
		if _, after, ok := strings.Cut(m.Content, "Your subtask: "); ok {
			line, _, _ := strings.Cut(after, "\n")
			return line
		}
	}
	return "unknown"
}

var fillerWords = strings.Fields(`the section states that requests are retried with backoff when
the server answers with a rate limit and the client keeps the request identifier
for later inspection while timeouts bound each attempt separately from the whole
operation so that a slow network does not hide a failure configuration options
follow a functional pattern where each option applies one change and defaults
remain documented beside the type that owns them evidence quoted from lines`)

// filler is n words of plausible prose chosen deterministically from seed.
func filler(seed string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if i%14 == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(fillerWords[r.IntN(len(fillerWords))])
	}
	b.WriteString(".")
	return b.String()
}

// newModel is baton's production stack against the fake: the Anthropic
// provider on the real SDK inside baton.Stack (the retry policy outside
// the limits), as baton.Ask builds it.
func newModel(srv *llmtest.Server, limits llm.Limits) (llm.Model, error) {
	p, err := newClient(srv.AnthropicBaseURL())
	if err != nil {
		return nil, err
	}
	return baton.Stack(p, baton.CallPolicy{Concurrency: limits.Concurrency,
		RequestsPerMinute: limits.RequestsPerMinute, TokensPerMinute: limits.TokensPerMinute}), nil
}

// newClient is the Anthropic provider on the real SDK against a fake at
// baseURL, in this process or another.
func newClient(baseURL string) (llm.Model, error) {
	return anthropic.New(anthropic.Config{BaseURL: baseURL, APIKey: "bench", Model: ModelName})
}

// ask runs req against the fake at baseURL through baton.Ask, the entry point of
// `baton ask`: the same stack, window rules and record, with the record
// kept in memory and nothing read from the environment.
func ask(ctx context.Context, baseURL string, req baton.AskRequest, ev baton.Events) (*orchestrate.Record, error) {
	p, err := newClient(baseURL)
	if err != nil {
		return nil, err
	}
	if req.Model == "" {
		req.Model = ModelName
	}
	req.NoSave = true
	res, err := baton.Ask(ctx, req, baton.WithClient(p, "anthropic"), baton.WithEvents(ev),
		baton.WithEnv(func(string) string { return "" }), baton.WithTracer(noop.NewTracerProvider().Tracer("")))
	if res == nil {
		return nil, err
	}
	return res.Record, err
}

// text is one document given to baton.Ask as it is, under name.
func text(name, s string) *document.Context {
	return &document.Context{Text: s, Sources: []document.Source{{Name: name}}}
}

// sources names the documents of a combined context.
func sources(names []string) []document.Source {
	out := make([]document.Source, len(names))
	for i, n := range names {
		out[i] = document.Source{Name: n}
	}
	return out
}
