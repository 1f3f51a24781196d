package workflow

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/baton-dev/baton/internal/yamlsafe"
)

// Reading the fields of baton.yaml: each reader checks its node's kind and
// records a problem with the line it stands on.

func (p *parseState) value(n ast.Node, field string) (any, bool) {
	var v any
	if err := yamlsafe.NodeToValue(n, &v); err != nil {
		_, msg := yamlMessage(err)
		p.errorf(line(n), field, "%s", msg)
		return nil, false
	}
	return v, true
}

func (p *parseState) str(n ast.Node, field string) string {
	v, ok := p.value(n, field)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr || strings.TrimSpace(s) == "" {
		p.errorf(line(n), field, "must be a non-empty string, not %s", describe(v))
		return ""
	}
	return strings.TrimSpace(s)
}

func (p *parseState) number(n ast.Node, field string) (float64, bool) {
	v, ok := p.value(n, field)
	if !ok {
		return 0, false
	}
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float64:
		return t, true
	}
	p.errorf(line(n), field, "must be a number, not %s", describe(v))
	return 0, false
}

// count reads a non-negative whole number; zero is allowed only when
// zeroOK, since for most counts it would silently disable a limit.
func (p *parseState) count(n ast.Node, field string, zeroOK bool) int {
	v, ok := p.value(n, field)
	if !ok {
		return 0
	}
	var i int64
	switch t := v.(type) {
	case int64:
		i = t
	case uint64:
		if t > math.MaxInt32 {
			i = -1
		} else {
			i = int64(t)
		}
	case float64:
		if t == math.Trunc(t) && t >= 0 && t <= math.MaxInt32 {
			i = int64(t)
		} else {
			i = -1
		}
	default:
		p.errorf(line(n), field, "must be a whole number, not %s", describe(v))
		return 0
	}
	if i < 0 || i > math.MaxInt32 || (i == 0 && !zeroOK) {
		min := "a positive"
		if zeroOK {
			min = "a non-negative"
		}
		p.errorf(line(n), field, "must be %s whole number below 2^31, got %s", min, describe(v))
		return 0
	}
	return int(i)
}

// relPath reads a workspace-relative path. Escapes are refused here, before
// a run starts, rather than when the runner first touches the file.
func (p *parseState) relPath(n ast.Node, field, def string) string {
	s := p.str(n, field)
	if s == "" {
		return def
	}
	if strings.IndexByte(s, 0) >= 0 {
		p.errorf(line(n), field, "contains a NUL byte")
		return def
	}
	slash := filepath.ToSlash(s)
	if filepath.IsAbs(s) || strings.HasPrefix(slash, "/") {
		p.errorf(line(n), field, "%q must be relative to the workspace, not absolute", s)
		return def
	}
	clean := filepath.ToSlash(filepath.Clean(s))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		p.errorf(line(n), field, "%q leaves the workspace", s)
		return def
	}
	if clean == "." {
		p.errorf(line(n), field, "must name a file, not the workspace itself")
		return def
	}
	return clean
}

func (p *parseState) strList(n ast.Node, field string) []string {
	v, ok := p.value(n, field)
	if !ok {
		return nil
	}
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			break
		}
		return []string{strings.TrimSpace(t)}
	case []any:
		var out []string
		for i, item := range t {
			s, isStr := item.(string)
			if !isStr || strings.TrimSpace(s) == "" {
				p.errorf(line(n), fmt.Sprintf("%s[%d]", field, i), "must be a non-empty string, not %s", describe(item))
				continue
			}
			out = append(out, strings.TrimSpace(s))
		}
		return out
	case nil:
		return nil
	}
	p.errorf(line(n), field, "must be a folder or a list of folders, not %s", describe(v))
	return nil
}

func (p *parseState) phases(n ast.Node) []Phase {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		p.errorf(line(n), "phases", "must be a list of phases, not a %s", nodeKind(n))
		return nil
	}
	if len(seq.Values) == 0 {
		p.errorf(line(n), "phases", "is empty: list at least one phase with a name and a skill")
		return nil
	}
	var out []Phase
	names := map[string]int{}
	for i, item := range seq.Values {
		field := fmt.Sprintf("phases[%d]", i)
		m, ok := item.(*ast.MappingNode)
		if !ok {
			p.errorf(line(item), field, "must be a mapping with name and skill, not a %s", nodeKind(item))
			continue
		}
		ph := Phase{Line: line(item)}
		seen := map[string]bool{}
		for _, mv := range m.Values {
			key, kl := mv.Key.GetToken().Value, line(mv.Key)
			f := field + "." + key
			if seen[key] {
				p.errorf(kl, f, "appears twice")
				continue
			}
			seen[key] = true
			switch key {
			case "name":
				ph.Name = p.str(mv.Value, f)
			case "skill":
				ph.Skill = p.str(mv.Value, f)
			case "expect_tokens":
				ph.ExpectTokens = p.count(mv.Value, f, true)
			default:
				p.warnf(kl, f, "unknown key; baton ignores it")
			}
		}
		if !seen["name"] {
			p.errorf(ph.Line, field+".name", "is required")
		}
		if !seen["skill"] {
			p.errorf(ph.Line, field+".skill", "is required: the skill the phase starts with")
		}
		if ph.Name != "" {
			if j, dup := names[ph.Name]; dup {
				p.errorf(ph.Line, field+".name", "%q is already the name of phases[%d]", ph.Name, j)
			}
			names[ph.Name] = i
		}
		out = append(out, ph)
	}
	return out
}

// line returns the 1-based line a node starts on, or 0.
func line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func nodeKind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.NullNode:
		return "null value"
	case nil:
		return "missing value"
	}
	return "single value"
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "an empty value"
	case string:
		return fmt.Sprintf("%q", t)
	case []any:
		return "a list"
	case map[string]any, map[any]any, yaml.MapSlice:
		return "a mapping"
	case bool:
		return fmt.Sprintf("the boolean %v", t)
	}
	return fmt.Sprintf("%v", v)
}

// yamlMessage turns a yamlsafe error into a line number and a one-line
// message.
func yamlMessage(err error) (int, string) {
	var ye *yamlsafe.Error
	if errors.As(err, &ye) {
		return ye.Line, ye.Msg
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return 0, msg
}
