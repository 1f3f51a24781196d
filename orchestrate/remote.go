package orchestrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/slice"
)

// SubagentTask is the name the sub-agent task is registered under in every
// process of a deployment (engine.Tasks).
const SubagentTask = "baton.subagent"

// maxSubagentOutput bounds what one sub-agent item may return: its answer
// is bounded by its max_tokens, so anything larger is a fault, not an
// answer to keep in the database.
const maxSubagentOutput = 1 << 20

// Documents keeps documents by content hash, once each. The coordinator
// puts the context before it enqueues work that names it; a worker gets it
// by the hash an item carries.
type Documents interface {
	Put(ctx context.Context, hash string, content []byte) error
	Get(ctx context.Context, hash string) ([]byte, error)
}

// ErrRequestMismatch means a worker rebuilt a different request from an
// item than the coordinator built: the two run different baton versions or
// skills, and the answer would not be the one the coordinator asked for.
var ErrRequestMismatch = errors.New("the worker built a different request than the coordinator")

// SubagentInput is one delegated sub-agent call as an engine item carries
// it: the document by hash and the slice by its pointers, never the text.
// The worker cuts the slice with the same assembler and builds the same
// request; RequestHash lets it check that it did.
type SubagentInput struct {
	Document    string         `json:"document"` // sha256 of the whole context, hex
	Whole       bool           `json:"whole,omitempty"`
	Pointers    slice.Pointers `json:"pointers"`
	Skill       string         `json:"skill"`
	System      string         `json:"system"` // the skill's prompt, as the coordinator resolved it
	Instruction string         `json:"instruction"`
	Model       string         `json:"model"`
	Temperature float64        `json:"temperature"`
	MaxTokens   int            `json:"max_tokens"`
	Stream      bool           `json:"stream,omitempty"`
	RequestHash string         `json:"request_hash"`
}

// ContentHash is the key a document is stored under.
func ContentHash(content string) string {
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:])
}

// RequestHash is the key a model call is recorded under: the same request
// always has the same hash, so its recorded response is never paid again.
func RequestHash(req *llm.Request) (string, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("hash the request: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// remote sends subtask j's one whole-slice request through the engine as
// an item, after storing the context once.
func (r *run) remote(ctx context.Context, j *job, req *llm.Request) (*llm.Response, error) {
	if err := r.storeContext(ctx); err != nil {
		return nil, err
	}
	hash, err := RequestHash(req)
	if err != nil {
		return nil, err
	}
	in := SubagentInput{
		Document: r.docHash, Whole: j.whole,
		Pointers: slice.Pointers{Sections: j.st.ContextPointers.Sections, LineRanges: j.st.ContextPointers.LineRanges, Passages: j.st.ContextPointers.Passages},
		Skill:    j.sk.Name, System: j.sk.Body, Instruction: j.instr,
		Model: req.Model, Temperature: *r.cfg.Temperature, MaxTokens: req.MaxTokens, Stream: req.Stream,
		RequestHash: hash,
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode the item: %w", err)
	}
	// The item is named by its request: the same call asked again (a
	// coordinator run again) is answered from the record.
	res := r.cfg.Engine.FanOut(ctx, []engine.Item{{ID: "subagent-" + hash, Task: SubagentTask, Input: b}})[0]
	if res.Err != nil {
		return nil, res.Err
	}
	var resp llm.Response
	if err := json.Unmarshal(res.Output, &resp); err != nil {
		return nil, fmt.Errorf("read the sub-agent's result: %w", err)
	}
	return &resp, nil
}

// storeContext puts the context in the document store once per ask.
func (r *run) storeContext(ctx context.Context) error {
	if r.cfg.Documents == nil {
		return errors.New("an engine was given without a document store")
	}
	r.docOnce.Do(func() {
		r.docHash = ContentHash(r.cfg.Context)
		r.docErr = r.cfg.Documents.Put(ctx, r.docHash, []byte(r.cfg.Context))
	})
	if r.docErr != nil {
		return fmt.Errorf("store the context: %w", r.docErr)
	}
	return nil
}

// Tasks is the registry of every task an ask enqueues on a distributed
// engine, each over model and docs: what a coordinator (which recovers its
// own unfinished items) and a worker register. It is the one list, kept
// beside the tasks, so a new task cannot be missing from one of them.
func Tasks(model llm.Model, docs Documents) engine.Tasks {
	return engine.Tasks{
		SubagentTask: NewSubagentTask(model, docs),
		CallTask:     NewCallTask(model, docs),
	}
}

// NewSubagentTask is the task a worker runs for a SubagentInput: it reads
// the document by hash, cuts the slice with the same assembler, builds the
// same request the coordinator built and sends it to model as one recorded
// step keyed by the request's hash.
func NewSubagentTask(model llm.Model, docs Documents) engine.Task {
	cache := &docCache{docs: docs}
	return func(ctx context.Context, input []byte) ([]byte, error) {
		var in SubagentInput
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("sub-agent item: %w", err)
		}
		doc, err := cache.get(ctx, in.Document)
		if err != nil {
			return nil, err
		}
		req := BuildSubagentRequest(doc, in)
		hash, err := RequestHash(req)
		if err != nil {
			return nil, err
		}
		if hash != in.RequestHash {
			return nil, fmt.Errorf("sub-agent item (skill %q): %w", in.Skill, ErrRequestMismatch)
		}
		return recordedCall(ctx, model, req, hash)
	}
}

// BuildSubagentRequest cuts in's slice of doc as the assembler cut it for
// the coordinator (cut in dispatch.go) and builds the request over it.
func BuildSubagentRequest(doc *slice.Document, in SubagentInput) *llm.Request {
	text := sliceText(doc, in.Whole, in.Pointers)
	return &llm.Request{
		Model:       in.Model,
		System:      in.System,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: userMessage(text, in.Instruction)}},
		Temperature: llm.Float(in.Temperature),
		MaxTokens:   in.MaxTokens,
		Stream:      in.Stream,
	}
}

// sliceText is the text of a subtask's slice: the whole document, or what
// its pointers extract (no pointers is the whole document too).
func sliceText(doc *slice.Document, whole bool, p slice.Pointers) string {
	if whole || (len(p.Sections) == 0 && len(p.LineRanges) == 0 && len(p.Passages) == 0) {
		return doc.Text()
	}
	return doc.Extract(p).Text
}

// docCache keeps the last document parsed: the items of one ask all name
// the same one, and a worker should not read and parse it for each.
type docCache struct {
	docs Documents
	mu   sync.Mutex
	hash string
	doc  *slice.Document
}

func (c *docCache) get(ctx context.Context, hash string) (*slice.Document, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hash == hash {
		return c.doc, nil
	}
	b, err := c.docs.Get(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", hash, err)
	}
	if ContentHash(string(b)) != hash {
		return nil, fmt.Errorf("document %s: its content does not match its hash", hash)
	}
	c.hash, c.doc = hash, slice.ParseString(string(b))
	return c.doc, nil
}
