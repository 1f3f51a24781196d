package mcpserver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The budget, ledger and state tools are listed with schemas and truthful
// annotations; ledger_append's schema marks nothing required, so that the
// handler, not the SDK's validator, names every missing field at once.
func TestLedgerToolsAreListed(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, idempotent, destructive bool }
	want := map[string]hints{
		"budget_check":  {readOnly: true, idempotent: true},
		"ledger_append": {},
		"ledger_latest": {readOnly: true, idempotent: true},
		"ledger_lint":   {readOnly: true, idempotent: true},
		"state_get":     {readOnly: true, idempotent: true},
		"state_set":     {destructive: true}, // append adds again
	}
	required := map[string][]string{"budget_check": {"context_tokens"}, "state_set": {"key", "value"}}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		if !ok {
			continue
		}
		delete(want, tl.Name)
		a := tl.Annotations
		if a == nil || tl.Description == "" || tl.OutputSchema == nil {
			t.Errorf("%s: annotations %+v, description %q", tl.Name, a, tl.Description)
			continue
		}
		destructive := a.DestructiveHint == nil || *a.DestructiveHint
		if a.ReadOnlyHint != w.readOnly || a.IdempotentHint != w.idempotent || (!a.ReadOnlyHint && destructive != w.destructive) ||
			a.OpenWorldHint == nil || *a.OpenWorldHint {
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
