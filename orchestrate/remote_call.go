package orchestrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/slice"
)

// CallTask is the name the map and reduce call task is registered under in
// every process of a deployment (engine.Tasks), beside SubagentTask.
const CallTask = "baton.call"

// partMark stands in a map request's user message for the piece of the
// slice it carries. It holds NUL bytes, which a document read by baton
// never has in a place that matters; a request that holds it anyway is
// carried whole.
const partMark = "\x00baton-part\x00"

// CallInput is one map or reduce call as an engine item carries it: the
// request as the coordinator built it, except that a map request's piece
// of the slice is replaced by partMark and named by Ref. A reduce request
// carries only the task and the partial answers (bounded by the sub-agent
// return bound), never the document, so it is carried whole.
type CallInput struct {
	Skill       string      `json:"skill"`
	Request     llm.Request `json:"request"`
	Ref         *TextRef    `json:"ref,omitempty"`
	RequestHash string      `json:"request_hash"`
}

// TextRef names a piece of a subtask's slice by place: the document by
// hash, the slice by its pointers, the piece by byte offset and length in
// the slice's text, and the message it goes into.
type TextRef struct {
	Document string         `json:"document"`
	Whole    bool           `json:"whole,omitempty"`
	Pointers slice.Pointers `json:"pointers"`
	Offset   int            `json:"offset"`
	Length   int            `json:"length"`
	Message  int            `json:"message"`
}

// remoteCall sends one map or reduce request of subtask j through the
// engine as an item. part is the piece of j's slice a map request carries;
// the context is stored first, for the worker to cut it from.
func (r *run) remoteCall(ctx context.Context, j *job, req *llm.Request, part string) (*llm.Response, error) {
	hash, err := RequestHash(req)
	if err != nil {
		return nil, err
	}
	in := CallInput{Skill: j.sk.Name, Request: *req, RequestHash: hash}
	if part != "" {
		if err := r.storeContext(ctx); err != nil {
			return nil, err
		}
	}
	if ref, msgs, ok := r.refer(j, req, part); ok {
		in.Ref, in.Request.Messages = ref, msgs
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode the item: %w", err)
	}
	res := r.cfg.Engine.FanOut(ctx, []engine.Item{{ID: "call-" + hash, Task: CallTask, Input: b}})[0]
	if res.Err != nil {
		return nil, res.Err
	}
	var resp llm.Response
	if err := json.Unmarshal(res.Output, &resp); err != nil {
		return nil, fmt.Errorf("read the call's result: %w", err)
	}
	return &resp, nil
}

// refer replaces part in req's last message by partMark and names it by
// place in j's slice. It declines (and the request goes whole) when there
// is no part, the part is not in the slice's text, or the message already
// holds the mark. Replacing the first occurrence and putting the part back
// there gives the same message whichever occurrence was the part's own.
func (r *run) refer(j *job, req *llm.Request, part string) (*TextRef, []llm.Message, bool) {
	if part == "" || len(req.Messages) == 0 {
		return nil, nil, false
	}
	k := len(req.Messages) - 1
	content := req.Messages[k].Content
	off := strings.Index(j.text, part)
	if off < 0 || strings.Contains(content, partMark) || !strings.Contains(content, part) {
		return nil, nil, false
	}
	msgs := append([]llm.Message(nil), req.Messages...)
	msgs[k].Content = strings.Replace(content, part, partMark, 1)
	ref := &TextRef{Document: r.docHash, Whole: j.whole, Offset: off, Length: len(part), Message: k,
		Pointers: slice.Pointers{Sections: j.st.ContextPointers.Sections, LineRanges: j.st.ContextPointers.LineRanges, Passages: j.st.ContextPointers.Passages}}
	return ref, msgs, true
}

// NewCallTask is the task a worker runs for a CallInput: it puts the named
// piece of the slice back into the request, checks that the request is the
// one the coordinator built, and sends it to model as one recorded step
// keyed by the request's hash.
func NewCallTask(model llm.Model, docs Documents) engine.Task {
	cache := &docCache{docs: docs}
	return func(ctx context.Context, input []byte) ([]byte, error) {
		var in CallInput
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("call item: %w", err)
		}
		req := in.Request
		if ref := in.Ref; ref != nil {
			doc, err := cache.get(ctx, ref.Document)
			if err != nil {
				return nil, err
			}
			text := sliceText(doc, ref.Whole, ref.Pointers)
			// The row comes from the database: the bound is checked as
			// Length <= len-Offset, which cannot overflow as Offset+Length can.
			if ref.Offset < 0 || ref.Length < 0 || ref.Offset > len(text) || ref.Length > len(text)-ref.Offset || ref.Message < 0 || ref.Message >= len(req.Messages) {
				return nil, fmt.Errorf("call item (skill %q): its piece is outside the slice: %w", in.Skill, ErrRequestMismatch)
			}
			req.Messages = append([]llm.Message(nil), req.Messages...)
			req.Messages[ref.Message].Content = strings.Replace(req.Messages[ref.Message].Content, partMark, text[ref.Offset:ref.Offset+ref.Length], 1)
		}
		hash, err := RequestHash(&req)
		if err != nil {
			return nil, err
		}
		if hash != in.RequestHash {
			return nil, fmt.Errorf("call item (skill %q): %w", in.Skill, ErrRequestMismatch)
		}
		return recordedCall(ctx, model, &req, hash)
	}
}

// recordedCall sends req to model as one engine step keyed by its hash and
// returns the response as the step recorded it.
func recordedCall(ctx context.Context, model llm.Model, req *llm.Request, hash string) ([]byte, error) {
	return engine.Step(ctx, "llm-"+hash, func(sctx context.Context) ([]byte, error) {
		resp, err := generateRecovered(sctx, model, req)
		if err != nil {
			return nil, err
		}
		out, err := json.Marshal(resp)
		if err != nil {
			return nil, fmt.Errorf("encode the response: %w", err)
		}
		if len(out) > maxSubagentOutput {
			return nil, fmt.Errorf("the model's response is %d bytes, over the %d-byte bound", len(out), maxSubagentOutput)
		}
		return out, nil
	})
}
