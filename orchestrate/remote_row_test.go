package orchestrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// A work row is input from the database, which anyone with its URL can
// write: a crafted offset, length, message index or line range makes the
// worker's task return an error (the request it rebuilds is not the one
// hashed), never panic.
func TestCraftedWorkRowsAreErrors(t *testing.T) {
	ctx := context.Background()
	docs := &memDocs{}
	text := "# Guide\n\n## Part\n\nThe pumps ran all night.\n"
	hash := orchestrate.ContentHash(text)
	if err := docs.Put(ctx, hash, []byte(text)); err != nil {
		t.Fatal(err)
	}
	call := orchestrate.NewCallTask(nil, docs)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "read: \x00baton-part\x00"}}
	for _, ref := range []orchestrate.TextRef{
		{Offset: math.MaxInt, Length: 10},
		{Offset: 10, Length: math.MaxInt},
		{Offset: math.MaxInt, Length: math.MaxInt},
		{Offset: -1, Length: 2},
		{Offset: 0, Length: 4, Message: math.MaxInt},
		{Offset: 0, Length: 4, Pointers: slice.Pointers{LineRanges: [][2]int{{math.MaxInt, math.MaxInt}}}},
		{Offset: 0, Length: 4, Pointers: slice.Pointers{LineRanges: [][2]int{{-5, math.MaxInt}}}},
		{Offset: 0, Length: 4, Pointers: slice.Pointers{LineRanges: [][2]int{{math.MinInt, -1}}}},
	} {
		ref.Document = hash
		in, _ := json.Marshal(orchestrate.CallInput{Skill: "lookup", Request: llm.Request{Model: "m", Messages: msgs}, Ref: &ref, RequestHash: "0"})
		if _, err := runTask(call, in); !errors.Is(err, orchestrate.ErrRequestMismatch) {
			t.Errorf("call row with %+v: %v, want %v", ref, err, orchestrate.ErrRequestMismatch)
		}
	}
	sub := orchestrate.NewSubagentTask(nil, docs)
	for _, lr := range [][][2]int{{{math.MaxInt, math.MaxInt}}, {{-5, math.MaxInt}}, {{math.MaxInt, 1}}, {{math.MinInt, math.MinInt}}} {
		in, _ := json.Marshal(orchestrate.SubagentInput{Document: hash, Pointers: slice.Pointers{LineRanges: lr}, Skill: "lookup", RequestHash: "0"})
		if _, err := runTask(sub, in); !errors.Is(err, orchestrate.ErrRequestMismatch) {
			t.Errorf("sub-agent row with line ranges %v: %v, want %v", lr, err, orchestrate.ErrRequestMismatch)
		}
	}
}

// runTask runs task, turning a panic into an error that names it.
func runTask(task func(context.Context, []byte) ([]byte, error), in []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return task(context.Background(), in)
}
