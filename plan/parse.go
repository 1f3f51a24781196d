package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// maxCandidates bounds how many brace positions Parse tries, so a reply full
// of stray braces costs linear-ish time rather than quadratic.
const maxCandidates = 256

// Parse reads a plan out of a model's reply and validates it.
//
// It tolerates what models do around the JSON: a byte-order mark, markdown
// code fences, prose before and after, and trailing commas before } or ]
// (unambiguous, and common enough that rejecting them would waste a repair
// round-trip). It takes the first balanced JSON object that has a "subtasks"
// field, or wraps one one level deep ({"plan": {...}}).
//
// It also normalises what models write inside the plan: line ranges as
// "12-40" strings, {"start":12,"end":40} objects, [12] single lines or a bare
// [12, 40] pair; sections as a single string, context_pointers as a bare list
// of headings, headings copied with their "## " marker, pointers placed on
// the subtask itself; skill names in any case or with spaces ("Fact
// Extraction" becomes "fact-extraction", "Self" becomes "self"); numeric
// answers; camelCase keys. Some repairs are recorded in Plan.Warnings rather
// than rejected: an answer on a delegated subtask is dropped (the sub-agent
// will do the work anyway), a subtask with an answer and no skill or
// pointers is taken as "self", empty section names are discarded.
//
// Unknown skill names are not an error; see UnknownSkills and ResolveSkills.
//
// The error is a *ValidationError wrapping ErrInvalidPlan, and also ErrNoJSON
// when the reply holds no JSON object at all. Its problems can be quoted back
// to the model with RepairPrompt.
func Parse(raw string, opts Options) (*Plan, error) {
	obj, err := extractObject(raw)
	if err != nil {
		return nil, err
	}
	p, probs := decodePlan(obj)
	if p == nil {
		return nil, &ValidationError{Problems: probs}
	}
	probs = append(probs, p.problems(opts)...)
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: dedupe(probs)}
	}
	return p, nil
}

// extractObject finds the plan object in raw. Keys of the returned object are
// folded (see foldKey).
func extractObject(raw string) (map[string]json.RawMessage, error) {
	raw = strings.TrimPrefix(raw, "\ufeff")
	var (
		decodeErr  error // first syntax error in a candidate that mentions subtasks
		unclosed   bool  // a candidate that mentions subtasks never closes
		sawObject  bool
		candidates int
	)
	for i := 0; i < len(raw) && candidates < maxCandidates; i++ {
		if raw[i] != '{' {
			continue
		}
		candidates++
		end := matchBrace(raw, i)
		if end < 0 {
			if strings.Contains(raw[i:], "subtasks") {
				unclosed = true
			}
			continue
		}
		text := raw[i : end+1]
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(stripTrailingCommas([]byte(text)), &obj); err != nil {
			if decodeErr == nil && strings.Contains(text, "subtasks") {
				decodeErr = err
			}
			continue
		}
		sawObject = true
		obj = foldKeys(obj)
		if _, ok := obj["subtasks"]; ok {
			return obj, nil
		}
		if inner := wrappedPlan(obj); inner != nil {
			return inner, nil
		}
		// A valid object that is not a plan: skip past it, its inner
		// objects are not plans either (wrappedPlan looked one level down).
		i = end
	}
	switch {
	case decodeErr != nil:
		return nil, &ValidationError{Problems: []string{fmt.Sprintf("the JSON object is malformed: %v", decodeErr)}}
	case unclosed:
		return nil, &ValidationError{Problems: []string{"the JSON object is not closed; the output may have been cut off"}}
	case sawObject:
		return nil, &ValidationError{Problems: []string{`no JSON object has a "subtasks" field`}}
	}
	return nil, &ValidationError{Problems: []string{"no JSON object found; reply with only the JSON plan"}, noJSON: true}
}

// wrappedPlan returns the first field of obj that is itself an object with a
// "subtasks" field, for replies like {"plan": {...}}.
func wrappedPlan(obj map[string]json.RawMessage) map[string]json.RawMessage {
	for _, k := range sortedKeys(obj) {
		var inner map[string]json.RawMessage
		if json.Unmarshal(stripTrailingCommas(obj[k]), &inner) != nil {
			continue
		}
		inner = foldKeys(inner)
		if _, ok := inner["subtasks"]; ok {
			return inner
		}
	}
	return nil
}

// jsonStrings follows whether a byte of JSON text is inside a string, so
// that the scanners below see only structure.
type jsonStrings struct{ in, escaped bool }

// inString reports whether c, the next byte, belongs to a string (its
// quotes included).
func (s *jsonStrings) inString(c byte) bool {
	if s.in {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.in = false
		}
		return true
	}
	if c == '"' {
		s.in = true
		return true
	}
	return false
}

// matchBrace returns the index of the brace closing the object that opens at
// s[start], or -1. Braces inside JSON strings do not count.
func matchBrace(s string, start int) int {
	depth := 0
	var str jsonStrings
	for i := start; i < len(s); i++ {
		c := s[i]
		if str.inString(c) {
			continue
		}
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// stripTrailingCommas removes commas that directly precede } or ] outside
// strings.
func stripTrailingCommas(b []byte) []byte {
	if !bytes.Contains(b, []byte(",")) {
		return b
	}
	out := make([]byte, 0, len(b))
	var str jsonStrings
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !str.inString(c) && c == ',' {
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && (b[j] == '}' || b[j] == ']') {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// foldKey lets "context_pointers", "contextPointers" and "Context Pointers"
// all name the same field.
func foldKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r == '_' || r == '-' || unicode.IsSpace(r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func foldKeys(obj map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(obj))
	for _, k := range sortedKeys(obj) {
		fk := foldKey(k)
		if _, dup := out[fk]; !dup {
			out[fk] = obj[k]
		}
	}
	return out
}

// decodePlan returns a nil plan when the object's shape is too far off to
// check subtask by subtask.
func decodePlan(obj map[string]json.RawMessage) (*Plan, []string) {
	p := &Plan{}
	var probs []string
	if r, ok := obj["reasoning"]; ok {
		p.Reasoning = looseText(r)
	}
	var items []json.RawMessage
	raw := bytes.TrimSpace(obj["subtasks"])
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '{':
		items = []json.RawMessage{raw} // a lone subtask not wrapped in a list
	default:
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, []string{`"subtasks" must be a list of objects`}
		}
	}
	for i, item := range items {
		st, sp, warns := decodeSubtask(item, i+1)
		p.Subtasks = append(p.Subtasks, st)
		probs = append(probs, sp...)
		p.Warnings = append(p.Warnings, warns...)
	}
	return p, probs
}

func decodeSubtask(raw json.RawMessage, n int) (st Subtask, probs, warns []string) {
	prefix := fmt.Sprintf("subtask %d: ", n)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return st, []string{prefix + "is not a JSON object"}, nil
	}
	obj = foldKeys(obj)

	var ok bool
	if st.Task, ok = scalarText(obj["task"]); !ok {
		probs = append(probs, prefix+"task is not a string")
	}
	var skill string
	if skill, ok = scalarText(obj["skill"]); !ok {
		probs = append(probs, prefix+"skill is not a string")
	}
	st.Skill = normalizeSkill(skill)
	st.Answer = strings.TrimSpace(looseText(obj["answer"]))
	scope, ok := scalarText(obj["scope"])
	if !ok {
		probs = append(probs, prefix+"scope is not a string")
	}
	st.Scope = normalizeScope(scope)

	ptrs := obj["contextpointers"]
	if ptrs == nil {
		ptrs = obj["pointers"]
	}
	var inner map[string]json.RawMessage
	switch ptrs = bytes.TrimSpace(ptrs); {
	case len(ptrs) == 0 || string(ptrs) == "null":
	case ptrs[0] == '[' || ptrs[0] == '"':
		// A bare list (or string) of headings: the model skipped the
		// object and gave only sections.
		inner = map[string]json.RawMessage{"sections": ptrs}
	default:
		if err := json.Unmarshal(ptrs, &inner); err != nil {
			probs = append(probs, prefix+"context_pointers is not an object")
		}
		inner = foldKeys(inner)
	}
	// Models sometimes put the pointers directly on the subtask.
	for _, src := range []map[string]json.RawMessage{inner, obj} {
		secs, sp, sw := decodeSections(src["sections"], prefix)
		st.ContextPointers.Sections = append(st.ContextPointers.Sections, secs...)
		probs, warns = append(probs, sp...), append(warns, sw...)
		lr := src["lineranges"]
		if lr == nil {
			lr = src["lines"]
		}
		ranges, rp := decodeRanges(lr, prefix)
		st.ContextPointers.LineRanges = append(st.ContextPointers.LineRanges, ranges...)
		probs = append(probs, rp...)
		ids, pp := decodePassages(src["passages"], prefix)
		st.ContextPointers.Passages = append(st.ContextPointers.Passages, ids...)
		probs = append(probs, pp...)
	}

	switch {
	case st.Skill == "" && st.Answer != "" && st.ContextPointers.IsEmpty():
		st.Skill = Self
		warns = append(warns, prefix+`skill was empty; taken as "self" because an answer was given`)
	case st.Skill != "" && !st.IsSelf() && st.Answer != "":
		st.Answer = ""
		warns = append(warns, prefix+fmt.Sprintf("answer dropped because skill is %q; only %q subtasks are answered inline", st.Skill, Self))
	}
	switch {
	case st.NeedsAll() && st.IsSelf():
		// The planner answered it; there is nothing to run over the parts.
		st.Scope = ""
		warns = append(warns, prefix+fmt.Sprintf("scope %q dropped because the planner answered the subtask itself", ScopeAll))
	case st.NeedsAll() && !st.ContextPointers.IsEmpty():
		warns = append(warns, prefix+fmt.Sprintf("scope is %q, so the subtask runs over the whole document and its context pointers are not used", ScopeAll))
	}
	return st, probs, warns
}

// normalizeScope reads what models write for a subtask's scope. Empty and
// the words for "its own slice" mean no scope; the words for "everything"
// mean ScopeAll. Anything else is kept, lowercased, for validation to
// reject with a message the model can act on.
func normalizeScope(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	switch s {
	case "", "none", "slice", "section", "sections", "pointers", "part", "local", "null":
		return ""
	case ScopeAll, "whole", "everything", "entire", "full", "document", "whole document", "all parts", "every part", "global":
		return ScopeAll
	}
	return s
}

// normalizeSkill lowercases and hyphenates: the library's names are
// lowercase and hyphenated (Agent Skills naming), and models capitalise.
// Underscores are kept; MatchSkill folds them.
func normalizeSkill(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}

// scalarText reads a JSON string, number or bool as text; null and absence
// read as "". ok is false for objects and arrays.
func scalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v), true
	case float64, bool:
		return string(raw), true
	}
	return "", false
}

// looseText reads any JSON value as text: strings as themselves, a list of
// strings joined by newlines, anything else as compact JSON. Used for free
// text (reasoning, answers) where the shape does not matter.
func looseText(raw json.RawMessage) string {
	if s, ok := scalarText(raw); ok {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "\n")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

func decodeSections(raw json.RawMessage, prefix string) (secs, probs, warns []string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, []string{prefix + "sections is not valid JSON"}, nil
	}
	var items []any
	switch v := v.(type) {
	case string:
		items = []any{v}
	case []any:
		items = v
	default:
		return nil, []string{prefix + "sections must be a list of heading titles"}, nil
	}
	for j, it := range items {
		s, ok := it.(string)
		if !ok {
			probs = append(probs, fmt.Sprintf("%ssection %d is not a string", prefix, j+1))
			continue
		}
		// The outline shows headings with their markdown markers, and models
		// copy them: "## Results" means the heading "Results".
		if s = strings.TrimSpace(headingMarker.ReplaceAllString(s, "")); s == "" {
			warns = append(warns, fmt.Sprintf("%ssection %d was empty and is ignored", prefix, j+1))
			continue
		}
		secs = append(secs, s)
	}
	return secs, probs, warns
}

// decodeRanges accepts [[a,b],...], a bare [a,b] pair, [a] single lines,
// numbers, "a-b" strings (also "a:b", "a..b", "a to b", "L12-L40", en dash)
// and {"start":a,"end":b} objects. A flat list of numbers longer than two is
// read as single lines, since no range has three ends.
func decodeRanges(raw json.RawMessage, prefix string) ([][2]int, []string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, []string{prefix + "line_ranges is not valid JSON"}
	}
	var items []any
	switch v := v.(type) {
	case []any:
		allNumbers := len(v) > 0
		for _, it := range v {
			if _, ok := it.(float64); !ok {
				allNumbers = false
			}
		}
		if allNumbers && len(v) <= 2 {
			items = []any{v}
		} else {
			items = v
		}
	case string:
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
			items = append(items, part)
		}
	default:
		items = []any{v}
	}
	var out [][2]int
	var probs []string
	for j, it := range items {
		r, err := oneRange(it)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%sline range %d %v", prefix, j+1, err))
			continue
		}
		out = append(out, r)
	}
	return out, probs
}

var headingMarker = regexp.MustCompile(`^\s*#{1,6}\s+`)

var rangeText = regexp.MustCompile(`(?i)^\s*(?:lines?\s*)?L?\s*(-?\d+)\s*(?:(?:-|–|—|:|\.\.\.?|to)\s*L?\s*(-?\d+))?\s*$`)

func oneRange(v any) ([2]int, error) {
	bad := fmt.Errorf("(%s) is not a pair of line numbers like [12, 40]", compactJSON(v))
	switch v := v.(type) {
	case float64:
		a, err := lineNumber(v)
		return [2]int{a, a}, err
	case string:
		m := rangeText.FindStringSubmatch(v)
		if m == nil {
			return [2]int{}, bad
		}
		a, err := strconv.Atoi(m[1])
		if err != nil {
			return [2]int{}, bad
		}
		b := a
		if m[2] != "" {
			if b, err = strconv.Atoi(m[2]); err != nil {
				return [2]int{}, bad
			}
		}
		return [2]int{a, b}, nil
	case []any:
		if len(v) < 1 || len(v) > 2 {
			return [2]int{}, bad
		}
		var r [2]int
		for k := range 2 {
			f, ok := v[min(k, len(v)-1)].(float64)
			if !ok {
				return [2]int{}, bad
			}
			n, err := lineNumber(f)
			if err != nil {
				return [2]int{}, err
			}
			r[k] = n
		}
		return r, nil
	case map[string]any:
		get := func(keys ...string) (int, bool, error) {
			for _, k := range sortedKeys(v) {
				val, fk := v[k], foldKey(k)
				for _, want := range keys {
					if fk != want {
						continue
					}
					f, ok := val.(float64)
					if !ok {
						return 0, true, bad
					}
					n, err := lineNumber(f)
					return n, true, err
				}
			}
			return 0, false, nil
		}
		a, okA, err := get("start", "from", "begin", "first", "line")
		if err != nil {
			return [2]int{}, err
		}
		b, okB, err := get("end", "to", "stop", "last")
		if err != nil {
			return [2]int{}, err
		}
		switch {
		case okA && okB:
			return [2]int{a, b}, nil
		case okA:
			return [2]int{a, a}, nil
		}
	}
	return [2]int{}, bad
}

func lineNumber(f float64) (int, error) {
	if f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, fmt.Errorf("(%v) is not a whole line number", f)
	}
	return int(f), nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
