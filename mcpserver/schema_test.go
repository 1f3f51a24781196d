package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// Every tool's schemas are portable: no `type` is a list (Go's nil slices
// and pointers come out as ["null", "array"], which single-type dialects
// reject) and no schema is untyped (an `any` field), the two findings of
// the MCP Inspector's --strict lint. Checked here without the Inspector.
func TestSchemasArePortable(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			data, _ := json.Marshal(schema)
			var v any
			json.Unmarshal(data, &v)
			for _, f := range findings(v, kind) {
				t.Errorf("%s: %s", tool.Name, f)
			}
		}
	}
}

// findings walks a schema as JSON and reports a list `type` and a schema
// with no keyword that constrains it.
func findings(v any, path string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	if _, isList := m["type"].([]any); isList {
		out = append(out, fmt.Sprintf("%s: type is a list %v", path, m["type"]))
	}
	constrained := false
	for _, k := range []string{"type", "anyOf", "oneOf", "allOf", "not", "$ref", "const", "enum"} {
		if _, ok := m[k]; ok {
			constrained = true
		}
	}
	if !constrained {
		out = append(out, fmt.Sprintf("%s: untyped schema %v", path, m))
	}
	for k, c := range m {
		switch k {
		case "properties", "$defs", "patternProperties":
			if cm, ok := c.(map[string]any); ok {
				for name, sub := range cm {
					out = append(out, findings(sub, path+"."+name)...)
				}
			}
		case "items", "additionalProperties":
			out = append(out, findings(c, path+"."+k)...)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if list, ok := c.([]any); ok {
				for i, sub := range list {
					out = append(out, findings(sub, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
				}
			}
		}
	}
	return out
}
