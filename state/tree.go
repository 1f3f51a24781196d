package state

import (
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Walking the parsed document and the decoded tree by key path.

func findKey(m *ast.MappingNode, key string) *ast.MappingValueNode {
	for _, mv := range m.Values {
		if k, ok := keyString(mv.Key); ok && k == key {
			return mv
		}
	}
	return nil
}

func keyString(k ast.MapKeyNode) (string, bool) {
	switch n := k.(type) {
	case *ast.StringNode:
		return n.Value, true
	case ast.ScalarNode:
		return fmt.Sprint(n.GetValue()), true
	}
	return "", false
}

// unwrap looks through an anchor or tag to the node it labels.
func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		default:
			return n
		}
	}
}

// ordered lists a mapping's decoded entries in the order the file has
// them. ok is false for keys that are not plain scalars.
func ordered(m *ast.MappingNode, decoded map[string]any) (yaml.MapSlice, bool) {
	ms := make(yaml.MapSlice, 0, len(m.Values))
	for _, mv := range m.Values {
		k, ok := keyString(mv.Key)
		if !ok {
			return nil, false
		}
		v, ok := decoded[k]
		if !ok {
			return nil, false
		}
		ms = append(ms, yaml.MapItem{Key: k, Value: v})
	}
	return ms, true
}

// setOrdered is setIn for a MapSlice: an existing key keeps its place, a
// new one goes last.
func setOrdered(ms yaml.MapSlice, path []string, v any) yaml.MapSlice {
	for i := range ms {
		if ms[i].Key != path[0] {
			continue
		}
		if len(path) == 1 {
			ms[i].Value = v
		} else if m, ok := ms[i].Value.(map[string]any); ok {
			m = cloneValue(m).(map[string]any)
			setIn(m, path[1:], v)
			ms[i].Value = m
		} else {
			ms[i].Value = nest(path[1:], v)
		}
		return ms
	}
	return append(ms, yaml.MapItem{Key: path[0], Value: nest(path[1:], v)})
}

func nest(path []string, v any) any {
	for i := len(path) - 1; i >= 0; i-- {
		v = yaml.MapSlice{{Key: path[i], Value: v}}
	}
	return v
}

func getIn(tree map[string]any, path []string) any {
	var cur any = tree
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// setIn sets path in tree, replacing any non-mapping on the way with a
// mapping, as spliceSet does to the file.
func setIn(tree map[string]any, path []string, v any) {
	m := tree
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
