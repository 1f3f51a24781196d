package state

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
)

// How a value baton writes is rendered in the style of the file around it.

// render encodes value for the position of a key indented by keyIndent:
// inline goes after "key:", block lines go below it.
func (d *document) render(value any, keyIndent int) (inline string, block []string, err error) {
	canon, err := canonical(value)
	if err != nil {
		return "", nil, err
	}
	out, err := marshal(value, d.indent)
	if err != nil {
		return "", nil, err
	}
	lines := dedent(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"))
	pad := func(ls []string, n int) []string {
		res := make([]string, len(ls))
		for i, l := range ls {
			if l != "" {
				l = strings.Repeat(" ", n) + l
			}
			res[i] = l
		}
		return res
	}
	switch c := canon.(type) {
	case map[string]any:
		if len(c) > 0 {
			return "", pad(lines, keyIndent+d.indent), nil
		}
	case []any:
		if len(c) > 0 {
			return "", pad(lines, keyIndent+d.indent), nil
		}
	}
	// A scalar: one line, or a block scalar whose content the encoder has
	// already indented by one step.
	return lines[0], pad(lines[1:], keyIndent), nil
}

// dedent removes the indentation the encoder gives a top-level list, so
// that the caller's padding alone places the lines.
func dedent(lines []string) []string {
	least := -1
	for _, l := range lines {
		if l != "" && (least < 0 || indentOf(l) < least) {
			least = indentOf(l)
		}
	}
	if least <= 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= least {
			out[i] = l[least:]
		}
	}
	return out
}

// renderEntry is a whole "key: value" entry as lines ending in the file's
// line ending.
func (d *document) renderEntry(key string, value any, indent int) (string, error) {
	k, err := marshal(key, d.indent)
	if err != nil {
		return "", err
	}
	ks := strings.TrimSuffix(string(k), "\n")
	if strings.Contains(ks, "\n") {
		return "", fmt.Errorf("%w: key %q cannot be written on one line", ErrUnsafeEdit, key)
	}
	inline, block, err := d.render(value, indent)
	if err != nil {
		return "", err
	}
	eol := d.lines.eol()
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent))
	b.WriteString(ks)
	b.WriteString(":")
	if inline != "" {
		b.WriteString(" ")
		b.WriteString(inline)
	}
	b.WriteString(eol)
	for _, l := range block {
		b.WriteString(l)
		b.WriteString(eol)
	}
	return b.String(), nil
}

func marshal(value any, indent int) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: cannot encode %T: %v", ErrUnsafeEdit, value, r)
		}
	}()
	out, err = yaml.MarshalWithOptions(value, yaml.Indent(indent), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("%w: cannot encode %T: %s", ErrUnsafeEdit, value, oneLine(err.Error()))
	}
	return out, nil
}

// canonical is value as it will read back from the file. Text that would
// not read back exactly as given (invalid UTF-8, say) is refused rather
// than silently changed.
func canonical(value any) (v any, err error) {
	out, err := marshal(value, 2)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%w: cannot read back %T: %v", ErrUnsafeEdit, value, r)
		}
	}()
	if err := yaml.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("%w: cannot read back %T: %s", ErrUnsafeEdit, value, oneLine(err.Error()))
	}
	v = normalise(v)
	if !sameText(value, v) {
		return nil, fmt.Errorf("%w: the text would not read back exactly as given", ErrUnsafeEdit)
	}
	return v, nil
}

// sameText reports whether every string in value survived encoding as it
// was. Values of other types are the encoder's to render.
func sameText(value, decoded any) bool {
	switch x := value.(type) {
	case string:
		return decoded == x
	case []string:
		d, ok := decoded.([]any)
		if !ok || len(d) != len(x) {
			return false
		}
		for i := range x {
			if d[i] != x[i] {
				return false
			}
		}
	case []any:
		d, ok := decoded.([]any)
		if !ok || len(d) != len(x) {
			return false
		}
		for i := range x {
			if !sameText(x[i], d[i]) {
				return false
			}
		}
	case map[string]any:
		d, ok := decoded.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range x {
			if !sameText(e, d[k]) {
				return false
			}
		}
	case yaml.MapSlice:
		d, ok := decoded.(map[string]any)
		if !ok {
			return false
		}
		for _, it := range x {
			k, isStr := it.Key.(string)
			if isStr && !sameText(it.Value, d[k]) {
				return false
			}
		}
	}
	return true
}
