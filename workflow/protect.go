package workflow

import (
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/goccy/go-yaml/ast"
)

// patterns reads protect: a doublestar glob or a list of them, each
// workspace-relative. A pattern that could never match what the user meant
// (bad syntax, absolute, climbing out with "..") is an error at load time:
// silently protecting nothing would be worse than refusing to run.
func (p *parseState) patterns(n ast.Node, field string) []string {
	var items []ast.Node
	switch t := n.(type) {
	case *ast.SequenceNode:
		items = t.Values
	case *ast.NullNode:
		return nil
	case *ast.MappingNode:
		p.errorf(line(n), field, "must be a glob pattern or a list of them, not a mapping")
		return nil
	default:
		items = []ast.Node{n}
	}
	var out []string
	for i, item := range items {
		f := field
		if _, isSeq := n.(*ast.SequenceNode); isSeq {
			f = field + "[" + strconv.Itoa(i) + "]"
		}
		s := p.str(item, f)
		if s == "" {
			continue
		}
		slash := strings.ReplaceAll(s, `\`, "/")
		switch {
		case strings.IndexByte(s, 0) >= 0:
			p.errorf(line(item), f, "contains a NUL byte")
		case strings.HasPrefix(slash, "/") || (len(slash) > 1 && slash[1] == ':'):
			p.errorf(line(item), f, "%q must be relative to the workspace, not absolute", s)
		case slash == ".." || strings.HasPrefix(slash, "../") || strings.Contains(slash, "/../") || strings.HasSuffix(slash, "/.."):
			p.errorf(line(item), f, "%q leaves the workspace", s)
		case !doublestar.ValidatePattern(s):
			p.errorf(line(item), f, "%q is not a valid glob pattern (check its brackets and braces)", s)
		default:
			out = append(out, strings.TrimPrefix(s, "./"))
		}
	}
	return out
}
