package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/tokens"
)

// overwrites is the annotation of state_set: it replaces a value. It is
// not idempotent: a set is, but the same call with append adds the value
// again, and the hint is for the tool, not for one of its modes.
var overwrites = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}

// StateGetIn names a value of state.yaml.
type StateGetIn struct {
	State string `json:"state,omitempty" jsonschema:"path of the state file, relative to the server's root; default the state file state_set writes first"`
	Key   string `json:"key,omitempty" jsonschema:"dotted path of the value, such as handoff.next_step (a number indexes a list); empty for the whole file"`
}

// StateGetOut is the value as JSON and as YAML text. When the text is over
// the result bound it is written to a file, Text and Value are empty, and
// Spilled says where.
type StateGetOut struct {
	State   string `json:"state"`
	Found   bool   `json:"found"`
	Value   any    `json:"value" jsonschema:"the value decoded; null when not found"`
	Text    string `json:"text" jsonschema:"the value as YAML; for the whole file, the file's own text"`
	Spilled *Spill `json:"spilled,omitempty"`
}

// StateSetIn is one edit of state.yaml.
type StateSetIn struct {
	State  string `json:"state,omitempty" jsonschema:"path of the state file, relative to the server's root: one the server may write; default the first of them"`
	Key    string `json:"key" jsonschema:"dotted path of the value to set, such as handoff.next_step; missing parents are added"`
	Value  any    `json:"value" jsonschema:"the value: any JSON value (an object's keys keep their order)"`
	Append bool   `json:"append,omitempty" jsonschema:"append value to the list at key (created when absent) instead of replacing it; not idempotent"`
}

// StateSetOut says what the edit did.
type StateSetOut struct {
	State   string `json:"state"`
	Key     string `json:"key"`
	Changed bool   `json:"changed" jsonschema:"false when the file already held the value"`
	Bytes   int    `json:"bytes" jsonschema:"the file's size after the edit"`
}

func (s *Server) addStateTools() {
	addTool(s, &mcp.Tool{Name: "state_get", Annotations: readOnly,
		Description: "Read a value of state.yaml (default the state file state_set writes first), the cockpit through which decisions travel between steps, by a dotted key such as handoff.next_step; an empty key gives the whole file."},
		s.stateGet)
	addTool(s, &mcp.Tool{Name: "state_set", Annotations: overwrites,
		Description: "Set (or, with append, add to the list at) a value of state.yaml by a dotted key, under the lock `baton run` takes. Only a state file the server is given is written: baton mcp --state, else the state: of the root's baton.yaml, else specs/state.yaml. Only the edited value's lines change: the user's comments, key order and quoting are kept, and an edit that cannot keep them is refused with nothing written."},
		s.stateSet)
}

// splitKey turns a dotted key into its segments, refusing an empty or
// malformed one.
func splitKey(key string) ([]string, error) {
	if key == "" {
		return nil, errors.New("key is empty; give a dotted path such as handoff.next_step")
	}
	segs := strings.Split(key, ".")
	for i, seg := range segs {
		switch {
		case seg == "":
			return nil, fmt.Errorf("key %q: segment %d is empty (two dots, or a dot at an end)", key, i+1)
		case strings.TrimSpace(seg) != seg:
			return nil, fmt.Errorf("key %q: segment %d %q has spaces around it", key, i+1, seg)
		case strings.IndexFunc(seg, unicode.IsControl) >= 0:
			return nil, fmt.Errorf("key %q: segment %d holds a control character", key, i+1)
		}
	}
	return segs, nil
}

func (s *Server) stateGet(_ context.Context, _ *mcp.CallToolRequest, in StateGetIn) (*mcp.CallToolResult, StateGetOut, error) {
	var segs []string
	if in.Key != "" {
		var err error
		if segs, err = splitKey(in.Key); err != nil {
			return nil, StateGetOut{}, err
		}
	}
	c, err := s.confine("state", cmp.Or(in.State, s.defaultPath("state")), false)
	if err != nil {
		return nil, StateGetOut{}, err
	}
	f, err := state.Load(c.abs)
	if err != nil {
		return nil, StateGetOut{}, c.wrap(err)
	}
	out := StateGetOut{State: c.rel}
	tree, _ := f.Get()
	v, found := walk(tree, segs)
	if !found {
		return nil, out, nil
	}
	out.Found = true
	if segs == nil {
		out.Text = string(f.Bytes())
	} else {
		text, err := yaml.Marshal(v)
		if err != nil {
			return nil, StateGetOut{}, fmt.Errorf("state %s: %s: %w", c.rel, in.Key, err)
		}
		out.Text = string(text)
	}
	out.Value = jsonSafe(v) // after the text, which keeps YAML's own .nan
	if out.Text, out.Spilled, err = s.spill("state", out.Text, tokens.Count(out.Text)); err != nil {
		return nil, StateGetOut{}, err
	}
	if out.Spilled != nil {
		out.Value = nil // as large as the text; the file holds it
	}
	return nil, out, nil
}

// walk follows segs down mappings and, by a number, lists.
func walk(v any, segs []string) (any, bool) {
	for _, seg := range segs {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// jsonSafe replaces what JSON cannot carry (YAML's .nan and .inf) by its
// YAML spelling.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonSafe(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonSafe(e)
		}
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
	}
	return v
}

func (s *Server) stateSet(_ context.Context, req *mcp.CallToolRequest, in StateSetIn) (*mcp.CallToolResult, StateSetOut, error) {
	segs, err := splitKey(in.Key)
	if err != nil {
		return nil, StateSetOut{}, err
	}
	value := in.Value
	if req != nil && req.Params != nil && len(req.Params.Arguments) > 0 {
		// The typed input decoded value into a Go map, whose keys have no
		// order; read it again from the wire so a new mapping's keys land
		// in the order the host wrote them, and integers stay integers.
		if value, err = orderedValue(req.Params.Arguments); err != nil {
			return nil, StateSetOut{}, err
		}
	}
	name := cmp.Or(in.State, s.defaultPath("state"))
	c, err := s.confine("state", name, true)
	if err != nil {
		return nil, StateSetOut{}, err
	}
	out := StateSetOut{State: c.rel, Key: in.Key}
	// Update is how `baton run` edits the file: its lock, the file loaded
	// fresh under it, the edit proved to touch nothing else, an atomic save.
	err = state.Update(c.abs, func(f *state.File) error {
		if err := checkNotWorkflow(name, f); err != nil {
			return err
		}
		// state_get indexes a list by a number; a set through one would
		// replace the list by a mapping, which no host means.
		for i := range len(segs) - 1 {
			if v, _ := f.Get(segs[:i+1]...); isList(v) {
				return fmt.Errorf("key %q: %s is a list; set the whole list, or add to it with append", in.Key, strings.Join(segs[:i+1], "."))
			}
		}
		before := bytes.Clone(f.Bytes())
		var err error
		if in.Append {
			err = f.Append(value, segs...)
		} else {
			err = f.Set(value, segs...)
		}
		out.Changed = !bytes.Equal(before, f.Bytes())
		out.Bytes = len(f.Bytes())
		return err
	})
	if err != nil {
		return nil, StateSetOut{}, c.wrap(err)
	}
	return nil, out, nil
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// orderedValue decodes the "value" argument with objects as yaml.MapSlice
// (their keys in the order written) and numbers as int64 when they are
// integers.
func orderedValue(args json.RawMessage) (any, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	raw, ok := top["value"]
	if !ok {
		return nil, errors.New("value is missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return v, nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			m := yaml.MapSlice{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				m = append(m, yaml.MapItem{Key: k, Value: v})
			}
			_, err := dec.Token() // '}'
			return m, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token() // ']'
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return f, nil
	case nil, bool, string:
		return x, nil
	}
	return nil, fmt.Errorf("unexpected %v", t)
}
