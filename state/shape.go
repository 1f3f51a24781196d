package state

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Skill suites written for agents that edit state.yaml by hand keep their
// cockpit in shapes of their own: completed_steps as one comma-separated
// string, last_step_completed as a multi-line summary. baton writes those
// keys in whatever shape the file already gives them, so a suite that reads
// its own state file back keeps working.

// maxSummaryBytes bounds a summary written to last_step_completed: an agent
// without a handoff block has its whole output as its summary, and the
// state file must stay small enough to be every step's input.
const maxSummaryBytes = 4 << 10

// stepList reads completed_steps: a list, or one comma-separated string.
func stepList(v any) []string {
	s, ok := v.(string)
	if !ok {
		return strs(v)
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendStep adds skill to the step list at path, keeping its shape: a list
// gets an item, a string gets ", skill" (or ",skill" when the file writes
// its commas without spaces), in the string's own quoting style.
func (f *File) appendStep(skill string, path ...string) error {
	v, _ := f.Get(path...)
	switch x := v.(type) {
	case nil, []any:
		return f.Append(skill, path...)
	case string:
		sep := ", "
		if strings.Contains(x, ",") && !strings.Contains(x, ", ") {
			sep = ","
		}
		have := strings.TrimRight(strings.TrimSpace(x), ", ")
		next := skill
		if have != "" {
			next = have + sep + skill
		}
		return f.setStyled(next, path...)
	}
	return fmt.Errorf("state %s: record step: %w: %s holds %s; baton keeps a list or a comma-separated string there",
		f.path, ErrUnsafeEdit, dotted(path), kindOf(v))
}

// CheckCycle reports, before any step runs, a <flow>_cycle.completed_steps
// that Record could not add to (a number, a mapping), so a run stops before
// it pays for a step rather than after.
func (f *File) CheckCycle(flow string) error {
	path := []string{flow + "_cycle", "completed_steps"}
	switch v, _ := f.Get(path...); v.(type) {
	case nil, []any, string:
		return nil
	default:
		return fmt.Errorf("state %s: %w: %s holds %s; baton keeps a list or a comma-separated string there",
			f.path, ErrUnsafeEdit, dotted(path), kindOf(v))
	}
}

// setLastStep writes handoff.last_step_completed: the step's summary, as a
// block scalar with the file's own chomping, where the file keeps a
// multi-line summary there; the skill's name otherwise.
func (f *File) setLastStep(skill, summary string) error {
	path := []string{"handoff", "last_step_completed"}
	cur, _ := f.Get(path...)
	text, _ := cur.(string)
	lit, isBlock := f.doc.node(path).(*ast.LiteralNode)
	summary = strings.TrimSpace(summary)
	if summary == "" || (!isBlock && !strings.Contains(text, "\n")) {
		return f.Set(skill, path...)
	}
	if len(summary) > maxSummaryBytes {
		cut := strings.LastIndexByte(summary[:maxSummaryBytes], '\n')
		if cut <= 0 {
			cut = maxSummaryBytes
		}
		summary = strings.ToValidUTF8(summary[:cut], "") + "\n(cut by baton: the step's summary was longer)"
	}
	chomp := ""
	if isBlock && lit.Start != nil {
		chomp = strings.TrimLeft(lit.Start.Value, "|>0123456789")
	}
	value := literal{text: skill + ": " + summary, strip: strings.HasPrefix(chomp, "-")}
	want := value.text
	if !value.strip {
		want += "\n"
	}
	g := *f
	if err := g.Set(value, path...); err == nil {
		if got, _ := g.Get(path...); got == want {
			*f = g
			return nil
		}
	}
	// Text no block scalar holds exactly (control characters, say): the
	// name still records the step.
	return f.Set(skill, path...)
}

// setStyled is Set for a string, written in the quoting style the value at
// path already has when that style can hold it, else as the encoder
// chooses.
func (f *File) setStyled(value string, path ...string) error {
	var styled any
	if n, ok := f.doc.node(path).(*ast.StringNode); ok && n.Token != nil {
		switch n.Token.Type {
		case token.DoubleQuoteType:
			styled = doubleQuoted(value)
		case token.SingleQuoteType:
			if !strings.ContainsAny(value, "\n\r") {
				styled = singleQuoted(value)
			}
		}
	}
	if styled != nil {
		// The proof in Set checks the file reads back as the styled text
		// encodes; this checks that is the text given.
		g := *f
		if g.Set(styled, path...) == nil {
			if got, _ := g.Get(path...); got == value {
				*f = g
				return nil
			}
		}
	}
	return f.Set(value, path...)
}

// doubleQuoted and singleQuoted are strings the encoder writes in that
// quoting style. Go's quoting escapes are all YAML double-quoted escapes,
// and the edit's proof checks the value reads back as given.
type (
	doubleQuoted string
	singleQuoted string
)

func (s doubleQuoted) MarshalYAML() ([]byte, error) { return []byte(strconv.Quote(string(s))), nil }

func (s singleQuoted) MarshalYAML() ([]byte, error) {
	return []byte("'" + strings.ReplaceAll(string(s), "'", "''") + "'"), nil
}

// literal is a string the encoder writes as a literal block scalar: clip
// chomping (one final line feed), or strip (none) when strip is set.
type literal struct {
	text  string
	strip bool
}

func (l literal) MarshalYAML() ([]byte, error) {
	var b strings.Builder
	b.WriteString("|")
	if l.strip {
		b.WriteString("-")
	}
	b.WriteString("\n")
	for _, line := range strings.Split(l.text, "\n") {
		if line != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

// node is the value node at path, looked through anchors and tags; nil
// when there is none.
func (d *document) node(path []string) ast.Node {
	if d.root == nil || d.root.IsFlowStyle {
		return nil
	}
	m := d.root
	for i, key := range path {
		mv := findKey(m, key)
		if mv == nil {
			return nil
		}
		v := unwrap(mv.Value)
		if i == len(path)-1 {
			return v
		}
		cm, ok := v.(*ast.MappingNode)
		if !ok {
			return nil
		}
		m = cm
	}
	return nil
}

// Changed reports whether the value at path reads differently in f than in
// before (comments, quoting and layout aside). A nil before has no values.
func (f *File) Changed(before *File, path ...string) bool {
	a, okA := f.Get(path...)
	if before == nil {
		return okA
	}
	b, okB := before.Get(path...)
	if !okA && !okB {
		return false
	}
	return !sameValue(a, b)
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case bool:
		return "a boolean"
	case int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
