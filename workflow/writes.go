package workflow

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// DefaultWrites is where a workflow that declares nothing lets its steps
// write: one outputs folder. The state file and the ledger are written by
// baton's own tools (update_state, the ledger entry before a reset), never
// by a model's write_file, so they need no declaration.
var DefaultWrites = []string{"out/**"}

// writes reads writes: a doublestar glob or a list of them, each
// workspace-relative, naming every path a step's write_file may write. A
// pattern ending in "/" names the folder's contents ("out/" is "out/**");
// any other pattern names exactly the paths it matches, so "out" alone is a
// file called out. An empty list (or an empty value) lets no step write.
// Bad patterns are refused as protect:'s are, with the line they stand on.
func (p *parseState) writes(n ast.Node, field string) []string {
	pats := p.patterns(n, field)
	out := make([]string, 0, len(pats))
	for _, s := range pats {
		if strings.HasSuffix(s, "/") {
			s += "**"
		}
		out = append(out, s)
	}
	return out
}
