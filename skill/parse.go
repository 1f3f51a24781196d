package skill

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/baton-dev/baton/internal/yamlsafe"
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// maxFrontmatter bounds the YAML handed to the parser. Real frontmatter is a
// few hundred bytes (the longest public one is about 1.5 KB); the bound keeps
// a hostile file from making the parser slow.
const maxFrontmatter = 64 << 10

// Parse reads one SKILL.md. path is used in problems and, when its base name
// is SKILL.md, to check that the skill's name matches its folder.
//
// The skill is returned only when there are no error-severity problems;
// otherwise the error is an *InvalidError wrapping ErrInvalidSkill. Warnings
// are returned either way.
func Parse(data []byte, path string) (*Skill, []Problem, error) {
	p := &parser{path: path}
	s := p.parse(data)
	if err := invalid(path, p.problems); err != nil {
		return nil, p.problems, err
	}
	s.Path = path
	return s, p.problems, nil
}

type parser struct {
	path     string
	problems []Problem
}

func (p *parser) errorf(field, format string, a ...any) {
	p.problems = append(p.problems, Problem{Severity: Error, Path: p.path, Field: fieldName(field), Message: fmt.Sprintf(format, a...)})
}

func (p *parser) warnf(field, format string, a ...any) {
	p.problems = append(p.problems, Problem{Severity: Warning, Path: p.path, Field: fieldName(field), Message: fmt.Sprintf(format, a...)})
}

// fieldName is a frontmatter key as a problem shows it: a key with a line
// break or another control character in it (a YAML key may hold one) is
// quoted, so every problem stays one line.
func fieldName(key string) string {
	if strings.IndexFunc(key, unicode.IsControl) >= 0 {
		return strconv.Quote(key)
	}
	return key
}

func (p *parser) parse(data []byte) *Skill {
	// A byte order mark is invisible in most editors, so refusing the file
	// would baffle its author; other hosts may refuse it, hence the warning.
	if bytes.HasPrefix(data, bom) {
		data = data[len(bom):]
		p.warnf("file", "starts with a UTF-8 byte order mark; baton ignores it but other hosts may not")
	}
	if !utf8.Valid(data) {
		p.warnf("file", "is not valid UTF-8; invalid bytes will reach the model as replacement characters")
	}
	// Windows line endings are common in hand-edited files and change
	// nothing about the meaning.
	text := strings.ReplaceAll(string(data), "\r\n", "\n")

	front, body, ok := p.split(text)
	if !ok {
		return nil
	}
	if len(front) > maxFrontmatter {
		p.errorf("frontmatter", "is %d bytes long; baton accepts at most %d", len(front), maxFrontmatter)
		return nil
	}
	s := &Skill{}
	p.frontmatter(front, s)
	s.Body = strings.TrimSpace(body)
	if s.Body == "" {
		p.warnf("body", "is empty; the skill gives a sub-agent no instructions")
	}
	s.OutputHint = s.Metadata[OutputHintKey]
	return s
}

// split separates the frontmatter from the body. The frontmatter must open
// on the very first line, as the specification requires; leading blank
// lines are reported as such because "no frontmatter" would mislead.
func (p *parser) split(text string) (front, body string, ok bool) {
	lines := strings.SplitAfter(text, "\n")
	if !isFence(lines[0]) {
		for i, l := range lines {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if isFence(strings.TrimLeft(l, " \t")) {
				p.errorf("frontmatter", "must start at the first byte of the file; found it on line %d", i+1)
				return "", "", false
			}
			break
		}
		p.errorf("frontmatter", "is missing; SKILL.md must start with a line containing only ---")
		return "", "", false
	}
	for i := 1; i < len(lines); i++ {
		if isFence(lines[i]) {
			return strings.Join(lines[1:i], ""), strings.Join(lines[i+1:], ""), true
		}
	}
	p.errorf("frontmatter", "is unterminated; no closing --- line follows the opening one")
	return "", "", false
}

func isFence(line string) bool {
	return strings.TrimRight(line, " \t\r\n") == "---"
}

// decode parses YAML within yamlsafe's bounds: a SKILL.md may come from
// anywhere, and its frontmatter must not be able to exhaust memory (an
// alias bomb), hang the parser or crash it.
func decode(src string, v any, opts ...yaml.DecodeOption) error {
	return yamlsafe.Limits{MaxBytes: maxFrontmatter}.Unmarshal([]byte(src), v, opts...)
}

func (p *parser) frontmatter(front string, s *Skill) {
	var doc any
	if err := decode(front, &doc, yaml.UseOrderedMap()); err != nil {
		what := "invalid YAML"
		if !errors.Is(err, yamlsafe.ErrSyntax) {
			what = "YAML refused"
		}
		p.errorf("frontmatter", "%s: %s", what, yamlMessage(err))
		return
	}
	var fields yaml.MapSlice
	switch d := doc.(type) {
	case nil:
		// Empty frontmatter: the missing fields are reported below.
	case yaml.MapSlice:
		fields = d
	default:
		p.errorf("frontmatter", "must be a YAML mapping of keys to values, not a %s", kind(doc))
		return
	}

	var haveName, haveDesc bool
	for _, item := range fields {
		key := keyString(item.Key)
		switch key {
		case "name":
			haveName = true
			s.Name, _ = p.required("name", item.Value)
		case "description":
			haveDesc = true
			d, _ := p.required("description", item.Value)
			s.Description = strings.TrimSpace(d)
		case "license":
			s.License = p.optionalString("license", item.Value)
		case "compatibility":
			s.Compatibility = p.optionalString("compatibility", item.Value)
			if n := utf8.RuneCountInString(s.Compatibility); n > MaxCompatibilityLen {
				p.warnf("compatibility", "is %d characters long; the specification allows at most %d", n, MaxCompatibilityLen)
			}
		case "metadata":
			s.Metadata = p.metadata(front, item.Value)
		case "allowed-tools":
			s.AllowedTools = p.allowedTools(item.Value)
		case "model":
			s.Model = p.optionalString("model", item.Value)
			if strings.IndexFunc(s.Model, unicode.IsSpace) >= 0 {
				p.warnf("model", "%q holds a space, which no model name does; baton ignores it", s.Model)
				s.Model = ""
			}
		default:
			p.warnf(key, "is not part of the Agent Skills specification; baton ignores it")
		}
	}
	if !haveName {
		p.errorf("name", "is required but missing")
	} else if s.Name != "" {
		p.checkName(s.Name)
	}
	if !haveDesc {
		p.errorf("description", "is required but missing")
	} else if n := utf8.RuneCountInString(s.Description); n > MaxDescriptionLen {
		p.warnf("description", "is %d characters long; the specification allows at most %d", n, MaxDescriptionLen)
	}
}

// required checks a field that must be a non-empty string.
func (p *parser) required(field string, v any) (string, bool) {
	str, ok := v.(string)
	switch {
	case v == nil:
		p.errorf(field, "is empty")
	case !ok:
		p.errorf(field, "must be a string, not a %s", kind(v))
	case strings.TrimSpace(str) == "":
		p.errorf(field, "is empty")
	default:
		return str, true
	}
	return "", false
}

// optionalString accepts a string, and the text of any other scalar with a
// warning, since `license: 2.0` plainly means the text "2.0".
func (p *parser) optionalString(field string, v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(t)
	case bool, uint64, int64, int, float64:
		p.warnf(field, "should be a string, not a %s; baton uses its text", kind(v))
		return scalarText(v)
	default:
		p.warnf(field, "must be a string, not a %s; baton ignores it", kind(v))
		return ""
	}
}

func (p *parser) checkName(name string) {
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		p.warnf("name", "is %d characters long; the specification allows at most %d", n, MaxNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			p.warnf("name", "%q contains %q; the specification allows only lowercase letters, digits and hyphens", name, r)
			break
		}
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		p.warnf("name", "%q starts or ends with a hyphen, which the specification forbids", name)
	}
	if strings.Contains(name, "--") {
		p.warnf("name", "%q contains consecutive hyphens, which the specification forbids", name)
	}
	if filepath.Base(p.path) == FileName {
		dir := filepath.Base(filepath.Dir(p.path))
		if dir != "." && dir != string(filepath.Separator) && dir != name {
			p.warnf("name", "%q does not match its folder name %q", name, dir)
		}
	}
}

// metadata keeps string values and the source text of other scalars, so
// that `version: 1.0` stays "1.0" rather than becoming the number 1.
func (p *parser) metadata(front string, v any) map[string]string {
	switch v.(type) {
	case nil:
		return nil
	case yaml.MapSlice:
	default:
		p.warnf("metadata", "must be a mapping of strings to strings, not a %s; baton ignores it", kind(v))
		return nil
	}
	var raw struct {
		Metadata map[string]rawText `yaml:"metadata"`
	}
	_ = decode(front, &raw) // best effort: the typed value is the fallback
	m := make(map[string]string)
	for _, item := range v.(yaml.MapSlice) {
		key := keyString(item.Key)
		field := "metadata." + key
		switch t := item.Value.(type) {
		case string:
			m[key] = t
		case nil:
			p.warnf(field, "has no value; baton uses an empty string")
			m[key] = ""
		case bool, uint64, int64, int, float64:
			p.warnf(field, "should be a string, not a %s; baton uses its text", kind(t))
			if r, ok := raw.Metadata[key]; ok && r.text != "" {
				m[key] = r.text
			} else {
				m[key] = scalarText(t)
			}
		default:
			p.warnf(field, "must be a string, not a %s; baton ignores it", kind(t))
		}
	}
	return m
}

// rawText captures a YAML value's source text.
type rawText struct{ text string }

func (r *rawText) UnmarshalYAML(b []byte) error {
	r.text = strings.TrimSpace(string(b))
	return nil
}

// allowedTools accepts the specification's space-separated string and the
// YAML list many hosts use. Separators inside parentheses are kept, since a
// tool pattern such as "Bash(git add:*)" is one entry.
func (p *parser) allowedTools(v any) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return splitTools(t)
	case []any:
		var tools []string
		for i, item := range t {
			switch it := item.(type) {
			case string:
				if s := strings.TrimSpace(it); s != "" {
					tools = append(tools, s)
				}
			case bool, uint64, int64, int, float64:
				p.warnf("allowed-tools", "entry %d should be a string, not a %s; baton uses its text", i+1, kind(it))
				tools = append(tools, scalarText(it))
			default:
				p.warnf("allowed-tools", "entry %d must be a string, not a %s; baton ignores it", i+1, kind(it))
			}
		}
		return tools
	default:
		p.warnf("allowed-tools", "must be a space-separated string or a list, not a %s; baton ignores it", kind(v))
		return nil
	}
}

func splitTools(s string) []string {
	var (
		tools []string
		cur   strings.Builder
		depth int
	)
	flush := func() {
		if cur.Len() > 0 {
			tools = append(tools, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return tools
}

func keyString(k any) string {
	if s, ok := k.(string); ok {
		if strings.TrimSpace(s) == "" {
			return strconv.Quote(s) // a problem's field must never be blank
		}
		return s
	}
	if k == nil {
		return "null"
	}
	return scalarText(k)
}

func scalarText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case uint64, int64, int, float64:
		return "number"
	case []any:
		return "list"
	case yaml.MapSlice, map[string]any, map[any]any:
		return "mapping"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// yamlMessage turns the YAML library's multi-line error, which quotes the
// source, into one line with a position in file lines (the frontmatter
// starts on line 2).
func yamlMessage(err error) string {
	var e *yamlsafe.Error
	if errors.As(err, &e) {
		msg := e.Msg
		if e.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", e.Line+1, msg)
		}
		if strings.Contains(msg, "mapping value is not allowed") {
			msg += " (quote values that contain \": \")"
		}
		return msg
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
