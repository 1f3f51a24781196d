package yamlsafe

import (
	"fmt"
	"math"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// checkTokens refuses, before parsing, the shapes the parser handles in
// more than linear time: deep nesting, block mappings with very many keys
// and streams of very many documents. It follows block structure by column
// (a key or "-" opens a level at its column, and any later one at a smaller
// column closes it), which is what the parser does too; flow collections
// are counted by their brackets.
func (l Limits) checkTokens(tokens token.Tokens) error {
	type level struct {
		col  int
		seq  bool
		keys int
	}
	var (
		stack []level
		flow  int
		docs  = 1
	)
	// open moves to the block level a key or "-" at col belongs to and
	// reports whether it starts a new level.
	open := func(col int, seq bool) *level {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			// A list may sit at its parent key's column ("a:\n- x"); a
			// key at that column ends the list, not the mapping.
			if top.col > col || (top.col == col && top.seq && !seq) {
				stack = stack[:len(stack)-1]
				continue
			}
			break
		}
		if n := len(stack); n > 0 && stack[n-1].col == col && stack[n-1].seq == seq {
			return &stack[n-1]
		}
		stack = append(stack, level{col: col, seq: seq})
		return &stack[len(stack)-1]
	}
	tooDeep := func(tk *token.Token) error {
		if len(stack)+flow > l.MaxDepth {
			return &Error{Line: tk.Position.Line, Kind: ErrTooComplex, Msg: fmt.Sprintf("nesting is deeper than %d levels", l.MaxDepth)}
		}
		return nil
	}
	for i, tk := range tokens {
		if tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.DocumentHeaderType, token.DocumentEndType:
			// "..." may end a document and a bare one follow it, so it
			// counts too; "---" after "..." makes a document count twice,
			// which the cap allows for.
			docs++
			if docs > l.MaxDocuments {
				return &Error{Line: tk.Position.Line, Kind: ErrTooComplex, Msg: fmt.Sprintf("more than %d YAML documents", l.MaxDocuments)}
			}
			stack, flow = stack[:0], 0
		case token.SequenceStartType, token.MappingStartType:
			flow++
			if err := tooDeep(tk); err != nil {
				return err
			}
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.SequenceEntryType:
			if flow == 0 {
				open(tk.Position.Column, true)
				if err := tooDeep(tk); err != nil {
					return err
				}
			}
		case token.MappingKeyType, token.MappingValueType:
			if flow > 0 {
				continue
			}
			key := tk
			if tk.Type == token.MappingValueType {
				if i == 0 {
					continue
				}
				key = tokens[i-1]
				if key.Position == nil || key.Type == token.MappingKeyType {
					continue // "? k\n: v" was counted at the "?"
				}
			}
			lv := open(key.Position.Column, false)
			lv.keys++
			if lv.keys > l.MaxKeys {
				return &Error{Line: key.Position.Line, Kind: ErrTooComplex, Msg: fmt.Sprintf("a mapping has more than %d keys", l.MaxKeys)}
			}
			if err := tooDeep(key); err != nil {
				return err
			}
		}
	}
	return nil
}

// aliasGrowth is how many values the aliases in n add when expanded,
// counted up to just past limit.
func aliasGrowth(n ast.Node, limit int) int {
	written := expandedSize(n, nil, math.MaxInt)
	return ExpandedSize(n, written+limit) - written
}

// ExpandedSize counts the values n decodes to, each alias counting as the
// size of its anchor, and stops counting past limit. Anchors precede their
// aliases in document order, so one walk in order sees every anchor before
// it is used; the walk visits each node once, so it costs the size of the
// tree, not of the expansion.
func ExpandedSize(n ast.Node, limit int) int {
	return expandedSize(n, map[string]int{}, limit+1)
}

func expandedSize(n ast.Node, anchors map[string]int, capped int) int {
	add := func(a, b int) int { return min(a+b, capped) }
	switch x := n.(type) {
	case nil:
		return 0
	case *ast.MappingNode:
		total := 1
		for _, mv := range x.Values {
			total = add(total, expandedSize(mv, anchors, capped))
		}
		return total
	case *ast.MappingValueNode:
		return add(expandedSize(x.Key, anchors, capped), expandedSize(x.Value, anchors, capped))
	case *ast.MappingKeyNode:
		return expandedSize(x.Value, anchors, capped)
	case *ast.SequenceNode:
		total := 1
		for _, v := range x.Values {
			total = add(total, expandedSize(v, anchors, capped))
		}
		return total
	case *ast.TagNode:
		return expandedSize(x.Value, anchors, capped)
	case *ast.AnchorNode:
		size := expandedSize(x.Value, anchors, capped)
		if anchors != nil && x.Name != nil && x.Name.GetToken() != nil {
			anchors[x.Name.GetToken().Value] = size
		}
		return size
	case *ast.AliasNode:
		if anchors == nil {
			return 1 // counting what is written, not what it expands to
		}
		if x.Value != nil && x.Value.GetToken() != nil {
			return max(anchors[x.Value.GetToken().Value], 1)
		}
		return 1
	}
	return 1
}

// FirstAlias returns the first alias in n in document order, or nil. It is
// for callers that accept no aliases at all; unlike ast.Filter it is safe
// on every tree Parse returns (ast.Filter panics on a document holding
// only a comment).
func FirstAlias(n ast.Node) *ast.AliasNode {
	switch x := n.(type) {
	case *ast.AliasNode:
		return x
	case *ast.MappingNode:
		for _, mv := range x.Values {
			if a := FirstAlias(mv); a != nil {
				return a
			}
		}
	case *ast.MappingValueNode:
		if a := FirstAlias(x.Key); a != nil {
			return a
		}
		return FirstAlias(x.Value)
	case *ast.MappingKeyNode:
		return FirstAlias(x.Value)
	case *ast.SequenceNode:
		for _, v := range x.Values {
			if a := FirstAlias(v); a != nil {
				return a
			}
		}
	case *ast.TagNode:
		return FirstAlias(x.Value)
	case *ast.AnchorNode:
		return FirstAlias(x.Value)
	}
	return nil
}
