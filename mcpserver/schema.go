package mcpserver

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool with schemas a host of any dialect can read.
// The SDK infers them from the Go types as it would, but a Go slice or
// pointer comes out as the type union ["null", "array"], which a host that
// maps tool schemas onto a single-type dialect (Gemini's function
// declarations, the OpenAPI subset) rejects or loosens, and an `any` field
// comes out with no type at all. portable rewrites both; the MCP
// Inspector's --strict lint finds nothing left to report.
func addTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	in, err := jsonschema.For[In](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err)) // a programming error, found by any test
	}
	out, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.Name, err))
	}
	portable(in, true, map[*jsonschema.Schema]bool{})
	portable(out, false, map[*jsonschema.Schema]bool{})
	t.InputSchema, t.OutputSchema = in, out
	mcp.AddTool(s.mcp, t, h)
}

// anyJSON is what a field of any JSON value declares: each type once.
func anyJSON() []*jsonschema.Schema {
	return []*jsonschema.Schema{
		{Type: "string"}, {Type: "number"}, {Type: "boolean"},
		{Type: "object"}, {Type: "array"}, {Type: "null"},
	}
}

// portable rewrites s and every schema under it. In an input, a nullable
// field becomes its one type: a host leaves an optional field out rather
// than send null. In an output, where a Go nil is sent as null, it becomes
// anyOf a null branch and the typed branch, each of a single type.
func portable(s *jsonschema.Schema, input bool, seen map[*jsonschema.Schema]bool) {
	if s == nil || seen[s] {
		return // a schema reached twice is rewritten once
	}
	seen[s] = true
	switch {
	case len(s.Types) == 2 && slices.Contains(s.Types, "null"):
		typ := s.Types[0]
		if typ == "null" {
			typ = s.Types[1]
		}
		s.Types = nil
		if input {
			s.Type = typ
			break
		}
		typed := *s
		typed.Type, typed.Description = typ, ""
		*s = jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{{Type: "null"}, &typed}}
	case s.Type == "" && s.Types == nil && s.Ref == "" && len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) == 0 && s.Not == nil && s.Const == nil && s.Enum == nil:
		s.AnyOf = anyJSON()
		return // its branches have one type each and nothing under them
	}
	for _, c := range children(s) {
		portable(c, input, seen)
	}
}

// children is every schema directly under s.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	var cs []*jsonschema.Schema
	for _, p := range s.Properties {
		cs = append(cs, p)
	}
	for _, p := range s.PatternProperties {
		cs = append(cs, p)
	}
	for _, d := range s.Defs {
		cs = append(cs, d)
	}
	// Not is left alone: the SDK spells a closed object's
	// additionalProperties as {"not": {}}, which is exact as it is.
	cs = append(cs, s.Items, s.AdditionalProperties, s.AdditionalItems)
	cs = append(cs, s.PrefixItems...)
	cs = append(cs, s.ItemsArray...)
	cs = append(cs, s.AnyOf...)
	cs = append(cs, s.OneOf...)
	cs = append(cs, s.AllOf...)
	return slices.DeleteFunc(cs, func(c *jsonschema.Schema) bool { return c == nil })
}
