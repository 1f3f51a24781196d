package mcpserver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Every tool is listed with a description, both schemas and truthful
// annotations, and a tool not in the table fails: a new tool has to say
// what it does to the host's files. ledger_append's schema marks nothing
// required, so that the handler, not the SDK's validator, names every
// missing field at once.
func TestToolsAreListedWithTruthfulAnnotations(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, idempotent, destructive, openWorld bool }
	reads := hints{readOnly: true, idempotent: true}
	want := map[string]hints{
		"outline":       {idempotent: true}, // writes only a spilled result, named by its content
		"slice":         {idempotent: true},
		"count_tokens":  reads,
		"budget_check":  reads,
		"ledger_append": {},
		"ledger_latest": reads,
		"ledger_lint":   reads,
		"state_get":     reads,
		"state_set":     {destructive: true}, // append adds again
		"ask":           {openWorld: true},   // calls a provider and pays again for the same input
		"skills_list":   reads,
		"skill_get":     reads,
	}
	required := map[string][]string{
		"outline": {"documents"}, "slice": {"document"}, "budget_check": {"context_tokens"},
		"state_set": {"key", "value"}, "ask": {"task", "documents"}, "skill_get": {"name"},
	}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		if !ok {
			t.Errorf("tool %s has no row in the annotations table", tl.Name)
			continue
		}
		delete(want, tl.Name)
		a := tl.Annotations
		if a == nil || tl.Description == "" || tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s: annotations %+v, description %q, schemas %v %v", tl.Name, a, tl.Description, tl.InputSchema != nil, tl.OutputSchema != nil)
			continue
		}
		// The spec's defaults: destructive and open world unless said.
		destructive := a.DestructiveHint == nil || *a.DestructiveHint
		openWorld := a.OpenWorldHint == nil || *a.OpenWorldHint
		if a.ReadOnlyHint != w.readOnly || a.IdempotentHint != w.idempotent || (!a.ReadOnlyHint && destructive != w.destructive) || openWorld != w.openWorld {
			t.Errorf("%s: annotations %+v, want %+v", tl.Name, a, w)
		}
		s, ok := tl.InputSchema.(*jsonschema.Schema)
		if !ok {
			// The client decodes a schema as a plain map.
			m, _ := tl.InputSchema.(map[string]any)
			req, _ := m["required"].([]any)
			var got []string
			for _, r := range req {
				got = append(got, r.(string))
			}
			s = &jsonschema.Schema{Required: got}
		}
		if !slices.Equal(s.Required, required[tl.Name]) {
			t.Errorf("%s: required %v, want %v", tl.Name, s.Required, required[tl.Name])
		}
	}
	for name := range want {
		t.Errorf("tool %s is not listed", name)
	}
}
