package plan

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// passageRef is a passage id as the assembler reads it: "p17", "p18-p20"
// or "p18-20", case and spacing aside.
var passageRef = regexp.MustCompile(`^\s*[pP]\s*\d{1,9}\s*(?:(?:-|–|—|\.\.)\s*[pP]?\s*\d{1,9}\s*)?$`)

// decodePassages accepts a list of ids or one string of ids separated by
// commas or spaces ("p3, p5-p7").
func decodePassages(raw json.RawMessage, prefix string) ([]string, []string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, []string{prefix + "passages is not valid JSON"}
	}
	var items []any
	switch v := v.(type) {
	case []any:
		items = v
	case string:
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
			items = append(items, f)
		}
	default:
		return nil, []string{prefix + "passages must be a list of passage ids such as \"p17\""}
	}
	var ids, probs []string
	for _, it := range items {
		s, ok := it.(string)
		if !ok || strings.TrimSpace(s) == "" {
			probs = append(probs, prefix+"a passage is not an id such as \"p17\"")
			continue
		}
		ids = append(ids, strings.TrimSpace(s))
	}
	return ids, probs
}
