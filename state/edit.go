package state

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Set replaces the value at path (keys from the top level down), adding the
// key, and any missing parents, at the end of its mapping when it is
// absent. Only the lines of that value change; everything else in the file
// keeps its bytes. Values are rendered by the YAML encoder (strings quoted
// only when they would otherwise read as something else, block style for
// lists and mappings); pass a yaml.MapSlice to fix the order of a new
// mapping's keys. On any error the File is unchanged.
func (f *File) Set(value any, path ...string) error {
	if err := checkPath(path); err != nil {
		return fmt.Errorf("state %s: set: %w", f.path, err)
	}
	canon, err := canonical(value)
	if err != nil {
		return fmt.Errorf("state %s: set %s: %w", f.path, dotted(path), err)
	}
	want := cloneValue(f.doc.tree).(map[string]any)
	setIn(want, path, canon)
	data, err := f.spliceSet(value, path)
	if err != nil {
		return fmt.Errorf("state %s: set %s: %w", f.path, dotted(path), err)
	}
	return f.commit(data, want, path)
}

// Append adds value to the end of the list at path, creating the list when
// it is absent or null. A block list gets the new item spliced after its
// last item, so comments between earlier items survive; a list in flow style
// is rewritten in block style.
func (f *File) Append(value any, path ...string) error {
	if err := checkPath(path); err != nil {
		return fmt.Errorf("state %s: append: %w", f.path, err)
	}
	old, _ := f.Get(path...)
	var list []any
	switch x := old.(type) {
	case nil:
	case []any:
		list = x
	default:
		return fmt.Errorf("state %s: append %s: %w: the value there is not a list", f.path, dotted(path), ErrUnsafeEdit)
	}
	canon, err := canonical(value)
	if err != nil {
		return fmt.Errorf("state %s: append %s: %w", f.path, dotted(path), err)
	}
	if len(list) > 0 {
		if data, ok := f.spliceAppend(value, path); ok {
			want := cloneValue(f.doc.tree).(map[string]any)
			setIn(want, path, append(cloneValue(list).([]any), canon))
			return f.commit(data, want, path)
		}
	}
	return f.Set(append(list, value), path...)
}

// commit accepts data only if it decodes to exactly want: that is the proof
// that the splice touched nothing but the edited value.
func (f *File) commit(data []byte, want map[string]any, path []string) error {
	err := f.tryCommit(data, want, path)
	if err != nil && len(data) > 0 && data[len(data)-1] != '\n' {
		// A file that ended without a line feed is kept that way, but a
		// block scalar at the very end needs one to keep its own.
		if f.tryCommit(append(slices.Clip(data), f.doc.lines.eol()...), want, path) == nil {
			return nil
		}
	}
	return err
}

func (f *File) tryCommit(data []byte, want map[string]any, path []string) error {
	doc, err := parseDocument(data)
	if err != nil {
		return fmt.Errorf("state %s: set %s: %w: the result would not parse (%v)", f.path, dotted(path), ErrUnsafeEdit, err)
	}
	if !sameValue(doc.tree, want) {
		return fmt.Errorf("state %s: set %s: %w: the result would not read back as intended", f.path, dotted(path), ErrUnsafeEdit)
	}
	f.data, f.doc = data, doc
	return nil
}

// sameValue compares decoded YAML values. It is reflect.DeepEqual except
// that NaN equals NaN (a user's ".nan" must not block every edit) and an
// empty list or mapping equals a missing one.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return len(x) == 0 && b == nil
		}
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return len(x) == 0 && b == nil
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		if y, ok := b.(float64); ok && math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
	case nil:
		switch y := b.(type) {
		case map[string]any:
			return len(y) == 0
		case []any:
			return len(y) == 0
		}
	}
	return reflect.DeepEqual(a, b)
}

func checkPath(path []string) error {
	if len(path) == 0 {
		return fmt.Errorf("%w: empty key path", ErrUnsafeEdit)
	}
	return nil
}

// dotted names a path in an error, one line whatever its keys hold: a key
// with a dot, a space, a quote or a control character is quoted.
func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = p
		if p == "" || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '.' || r == ' ' || r == '"' }) {
			parts[i] = strconv.Quote(p)
		}
	}
	return strings.Join(parts, ".")
}

// spliceSet returns the new bytes with value placed at path.
func (f *File) spliceSet(value any, path []string) ([]byte, error) {
	d := f.doc
	if d.root == nil {
		text, err := d.renderEntry(path[0], nest(path[1:], value), 0)
		if err != nil {
			return nil, err
		}
		return f.insertIntoEmpty(text), nil
	}
	if d.root.IsFlowStyle {
		return f.replaceEmptyFlowRoot(path, value)
	}
	m := d.root
	for i, key := range path {
		mv := findKey(m, key)
		if mv == nil {
			last := m.Values[len(m.Values)-1]
			ind, err := d.keyIndent(last)
			if err != nil {
				return nil, err
			}
			text, err := d.renderEntry(key, nest(path[i+1:], value), ind)
			if err != nil {
				return nil, err
			}
			return f.insertAfter(d.entryEnd(last, ind), text), nil
		}
		if i == len(path)-1 {
			return f.replaceValue(mv, value)
		}
		if cm, ok := unwrap(mv.Value).(*ast.MappingNode); ok && !cm.IsFlowStyle && len(cm.Values) > 0 {
			m = cm
			continue
		}
		// The parent is a flow mapping, a scalar or null: rewrite it whole,
		// in block style, keeping the keys (and their order) a flow mapping
		// already had.
		var merged any = nest(path[i+1:], value)
		if cm, ok := unwrap(mv.Value).(*ast.MappingNode); ok {
			old, _ := getIn(d.tree, path[:i+1]).(map[string]any)
			if ms, ok := ordered(cm, old); ok {
				merged = setOrdered(ms, path[i+1:], value)
			} else {
				m := cloneValue(old).(map[string]any)
				if m == nil {
					m = map[string]any{}
				}
				setIn(m, path[i+1:], value)
				merged = m
			}
		}
		return f.replaceValue(mv, merged)
	}
	return nil, fmt.Errorf("%w: empty key path", ErrUnsafeEdit)
}

// replaceEmptyFlowRoot handles a file that is just "{}", as some tools
// write an empty state: the braces give way to the first key. A top-level
// flow mapping with content is refused, since rewriting it would restyle
// the user's keys.
func (f *File) replaceEmptyFlowRoot(path []string, value any) ([]byte, error) {
	d := f.doc
	refuse := fmt.Errorf("%w: the top-level mapping is in flow style", ErrUnsafeEdit)
	if len(d.root.Values) > 0 || d.root.Start == nil || d.root.Start.Position == nil {
		return nil, refuse
	}
	l := d.root.Start.Position.Line
	if l < 1 || l > d.lines.count() || strings.TrimSpace(d.lines.text(l)) != "{}" {
		return nil, refuse
	}
	text, err := d.renderEntry(path[0], nest(path[1:], value), 0)
	if err != nil {
		return nil, err
	}
	if !d.lines.terminated(l) {
		text = strings.TrimSuffix(text, d.lines.eol())
	}
	return splice(f.data, d.lines.start(l), d.lines.end(l), text), nil
}

// spliceAppend inserts one item after the last item of the block list at
// path. ok is false when the list is not a plain block list.
func (f *File) spliceAppend(value any, path []string) (data []byte, ok bool) {
	d := f.doc
	if d.root == nil || d.root.IsFlowStyle {
		return nil, false
	}
	m := d.root
	var mv *ast.MappingValueNode
	for i, key := range path {
		if mv = findKey(m, key); mv == nil {
			return nil, false
		}
		if i == len(path)-1 {
			break
		}
		cm, isMap := unwrap(mv.Value).(*ast.MappingNode)
		if !isMap || cm.IsFlowStyle || len(cm.Values) == 0 {
			return nil, false
		}
		m = cm
	}
	seq, isSeq := unwrap(mv.Value).(*ast.SequenceNode)
	if !isSeq || seq.IsFlowStyle {
		return nil, false
	}
	ind, err := d.keyIndent(mv)
	if err != nil {
		return nil, false
	}
	end := d.entryEnd(mv, ind)
	dash := -1
	for l := mv.Start.Position.Line + 1; l <= end; l++ {
		t := strings.TrimLeft(d.lines.text(l), " ")
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '-' {
			dash = indentOf(d.lines.text(l))
		}
		break
	}
	if dash < 0 {
		return nil, false
	}
	out, err := marshal([]any{value}, d.indent)
	if err != nil {
		return nil, false
	}
	eol := d.lines.eol()
	var b strings.Builder
	for _, l := range dedent(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")) {
		if l != "" {
			b.WriteString(strings.Repeat(" ", dash))
		}
		b.WriteString(l)
		b.WriteString(eol)
	}
	return f.insertAfter(end, b.String()), true
}

// replaceValue rewrites the value of mv: the text after its colon on the
// key's line (an inline comment there is kept) and any lines of the value
// below it.
func (f *File) replaceValue(mv *ast.MappingValueNode, value any) ([]byte, error) {
	d := f.doc
	ind, err := d.keyIndent(mv)
	if err != nil {
		return nil, err
	}
	k := mv.Start.Position.Line
	end := d.entryEnd(mv, ind)
	line := d.lines.text(k)
	colon := byteCol(line, mv.Start.Position.Column)
	if colon >= len(line) || line[colon] != ':' {
		return nil, fmt.Errorf("%w: cannot find the colon after the key on line %d", ErrUnsafeEdit, k)
	}
	after := colon + 1
	commentAt := len(line)
	comment, ok, err := d.commentOn(k, end)
	if err != nil {
		return nil, err
	}
	if ok {
		// A comment runs to the end of its line, so its text fixes where
		// it starts; the lexer's column is not exact after tabs or block
		// scalar headers.
		at := len(line) - len(comment) - 1
		if at < after || line[at] != '#' {
			return nil, fmt.Errorf("%w: cannot place the comment on line %d", ErrUnsafeEdit, k)
		}
		commentAt = at
	}
	inline, block, err := d.render(value, ind)
	if err != nil {
		return nil, err
	}
	eol := d.lines.eol()
	var b strings.Builder
	b.WriteString(line[:after])
	if inline != "" {
		b.WriteString(" ")
		b.WriteString(inline)
	}
	if commentAt < len(line) {
		region := line[after:commentAt]
		gap := region[len(strings.TrimRight(region, " \t")):]
		if gap == "" {
			gap = " "
		}
		b.WriteString(gap)
		b.WriteString(line[commentAt:])
	}
	b.WriteString(eol)
	for _, l := range block {
		b.WriteString(l)
		b.WriteString(eol)
	}
	out := b.String()
	if !d.lines.terminated(end) {
		out = strings.TrimSuffix(out, eol)
	}
	return splice(f.data, d.lines.start(k), d.lines.end(end), out), nil
}

// commentOn returns the text after the "#" of a comment on the key line
// of the entry spanning lines from..to. It lexes just that entry: a mapping
// entry that starts its line is a complete piece of YAML, and lexing the
// whole file for every edit was the largest cost of an edit.
func (d *document) commentOn(from, to int) (text string, ok bool, err error) {
	var b strings.Builder
	for l := from; l <= to; l++ {
		b.WriteString(d.lines.text(l))
		b.WriteString("\n")
	}
	defer func() {
		if r := recover(); r != nil {
			text, ok, err = "", false, fmt.Errorf("%w: cannot find the comments on line %d: %v", ErrUnsafeEdit, from, r)
		}
	}()
	for _, tk := range lexer.Tokenize(b.String()) {
		if tk.Type == token.CommentType && tk.Position.Line == 1 {
			return tk.Value, true, nil
		}
	}
	return "", false, nil
}

// insertAfter puts text (whole lines) after line l.
func (f *File) insertAfter(l int, text string) []byte {
	d := f.doc
	if !d.lines.terminated(l) {
		// Keep a file that ended without a line feed ending without one.
		eol := d.lines.eol()
		text = eol + strings.TrimSuffix(text, eol)
	}
	at := d.lines.end(l)
	return splice(f.data, at, at, text)
}

// insertIntoEmpty places the first key of a document with no content:
// before a "..." end marker if there is one, else at the end.
func (f *File) insertIntoEmpty(text string) []byte {
	d := f.doc
	if d.end != nil && d.end.Position != nil {
		if l := d.end.Position.Line; l >= 1 && l <= d.lines.count() {
			at := d.lines.start(l)
			return splice(f.data, at, at, text)
		}
	}
	// The library does not always report the end marker of an empty
	// document; with no content, a line starting "..." can only be one.
	for l := 1; l <= d.lines.count(); l++ {
		if t := d.lines.text(l); t == "..." || strings.HasPrefix(t, "... ") || strings.HasPrefix(t, "...\t") {
			at := d.lines.start(l)
			return splice(f.data, at, at, text)
		}
	}
	at := len(f.data)
	if at > 0 && f.data[at-1] != '\n' {
		text = d.lines.eol() + text
	}
	return splice(f.data, at, at, text)
}

func splice(data []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(text))
	out = append(out, data[:from]...)
	out = append(out, text...)
	return append(out, data[to:]...)
}

// keyIndent is the indentation of mv's key, which must start its line as
// every key of a block mapping reached from the top level does.
func (d *document) keyIndent(mv *ast.MappingValueNode) (int, error) {
	kt := mv.Key.GetToken()
	if kt == nil || kt.Position == nil || mv.Start == nil || mv.Start.Position == nil {
		return 0, fmt.Errorf("%w: a key has no position", ErrUnsafeEdit)
	}
	l := mv.Start.Position.Line
	if kt.Position.Line != l || l < 1 || l > d.lines.count() {
		return 0, fmt.Errorf("%w: the key on line %d is not on the same line as its colon", ErrUnsafeEdit, kt.Position.Line)
	}
	return indentOf(d.lines.text(l)), nil
}

// entryEnd is the last line holding mv's value: the key's line, then every
// following line indented deeper than the key (or, for a list, a dash at
// the key's own indentation). Comment and blank lines after the last such
// line belong to whatever follows, so they are left alone.
func (d *document) entryEnd(mv *ast.MappingValueNode, keyIndent int) int {
	k := mv.Start.Position.Line
	v := unwrap(mv.Value)
	_, isSeq := v.(*ast.SequenceNode)
	_, isLit := v.(*ast.LiteralNode)
	end := k
	for l := k + 1; l <= d.lines.count(); l++ {
		t := d.lines.text(l)
		trimmed := strings.TrimLeft(t, " \t")
		ind := indentOf(t)
		if trimmed == "" {
			continue
		}
		if trimmed[0] == '#' && !(isLit && ind > keyIndent) {
			continue
		}
		if ind > keyIndent || (isSeq && ind == keyIndent && isDash(trimmed)) {
			end = l
			continue
		}
		break
	}
	return end
}

func isDash(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }
