package plan

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MaxExpand is how many collapsed headings an outline planner may ask to
// see the subsections of, in its one expansion round.
const MaxExpand = 4

// ParseExpand reads an outline planner's reply that asks to see the
// subsections of collapsed headings instead of planning: a JSON object
// with a non-empty "expand" list of paths and no subtasks. It reports
// false for anything else (a plan, or text that is neither), which then
// goes to Parse as a plan. Paths past MaxExpand are dropped.
func ParseExpand(raw string) ([]string, bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '{' {
			continue
		}
		end := matchBrace(raw, i)
		if end < 0 {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(stripTrailingCommas([]byte(raw[i:end+1])), &obj) != nil {
			i = end
			continue
		}
		obj = foldKeys(obj)
		var subs []json.RawMessage
		if s, ok := obj["subtasks"]; ok && json.Unmarshal(s, &subs) == nil && len(subs) > 0 {
			return nil, false
		}
		var paths []string
		if e, ok := obj["expand"]; !ok || json.Unmarshal(e, &paths) != nil {
			return nil, false
		}
		var out []string
		for _, p := range paths {
			if p = strings.TrimSpace(p); p != "" && len(out) < MaxExpand {
				out = append(out, p)
			}
		}
		return out, len(out) > 0
	}
	return nil, false
}

// expandNote is what the outline planner is told when its outline is
// collapsed: it may look one level deeper, once, before it plans.
func expandNote(n int) string {
	return fmt.Sprintf(`

The outline may be collapsed: a heading that says "N subsections hidden" stands for its subsections. If you need to see the subsections of some collapsed headings to choose the right sections, you may first reply with only {"subtasks": [], "expand": ["Path > Of > A collapsed heading"], "reasoning": ""}, naming up to %d paths copied from the outline; you are then shown their subsections, once, and write the plan. Otherwise write the plan directly, with "expand": []. A heading's title alone is also a pointer when no other section has that title.`, n)
}

// ExpandPrompt is the user turn that answers an expansion request: the
// subsections of each heading asked for, as outline lines, and what could
// not be shown.
func ExpandPrompt(subsections string, missing []string) string {
	var b strings.Builder
	b.WriteString("The subsections you asked for:\n<outline>\n")
	b.WriteString(subsections)
	if !strings.HasSuffix(subsections, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("</outline>\n")
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\nNot shown (not a collapsed heading of the outline, or no room left): %s.\n", quoteList(missing))
	}
	b.WriteString("\nNow reply with the JSON plan only, with \"expand\": []; every section pointer is a path from the outline or from the subsections above.")
	return b.String()
}

// OutlineJSONSchema is JSONSchema for an outline planner that may ask for
// an expansion: the same plan with an "expand" list, and subtasks that may
// be empty when it asks.
func OutlineJSONSchema() map[string]any {
	s := JSONSchema()
	props := s["properties"].(map[string]any)
	subs := map[string]any{}
	for k, v := range props["subtasks"].(map[string]any) {
		subs[k] = v
	}
	subs["minItems"] = 0
	out := map[string]any{}
	for k, v := range props {
		out[k] = v
	}
	out["subtasks"] = subs
	out["expand"] = map[string]any{
		"type":        "array",
		"description": "Paths of collapsed headings whose subsections to see before planning; empty in a plan.",
		"items":       map[string]any{"type": "string"},
	}
	s["properties"] = out
	s["required"] = []any{"subtasks", "reasoning", "expand"}
	return s
}
