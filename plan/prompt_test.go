package plan

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	golden_ "github.com/baton-dev/baton/internal/golden"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) { golden_.Check(t, filepath.Join("testdata", name), got) }

var testSkills = []SkillInfo{
	{Name: "summarization", Description: "Condense a passage into its gist."},
	{Name: "analytical-comparison", Description: "Compare two or more things\n  along explicit dimensions."},
	{Name: "fact-extraction", Description: "Pull out what the context states."},
}

const testDoc = `Acme annual report, internal draft.

# Company
Acme was founded in 1998 in Leeds.

## Products
Widgets and gadgets.

# Pricing
Two models: per seat and per use.
`

var testOutline = []OutlineEntry{
	{Level: 1, Title: "Company", Line: 3, EndLine: 8},
	{Level: 2, Title: "Products", Line: 6, EndLine: 8},
	{Level: 1, Title: "Pricing", Line: 9, EndLine: 10},
}

func TestPlannerPromptGolden(t *testing.T) {
	cases := []struct {
		name string
		in   PromptInput
	}{
		{"planner_outline", PromptInput{
			Task:          "When was Acme founded, and how do the two pricing models compare?",
			Outline:       testOutline,
			Skills:        testSkills,
			MaxSubtasks:   4,
			DocumentLines: 10,
			Context:       testDoc,
		}},
		{"planner_headerless", PromptInput{
			Task:    "Summarise the log.",
			Skills:  testSkills,
			Context: "boot ok\ndisk warning\nshutdown",
		}},
		{"planner_no_skills", PromptInput{Task: "t", Outline: testOutline[2:], Context: testDoc}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sys, user := PlannerPrompt(tc.in)
			golden(t, tc.name+".golden", "=== system ===\n"+sys+"\n=== user ===\n"+user)
		})
	}
}

func TestPlannerPromptProperties(t *testing.T) {
	in := PromptInput{Task: "When was Acme founded?", Outline: testOutline, Skills: testSkills, Context: testDoc}
	sys, user := PlannerPrompt(in)

	// The system prompt is the cacheable prefix: it must not depend on the
	// task, the document or the order skills arrive in.
	other := in
	other.Task, other.Context, other.Outline = "Something else entirely", "# Other\nbody\n", nil
	other.Skills = []SkillInfo{testSkills[2], testSkills[0], testSkills[1]}
	if sys2, _ := PlannerPrompt(other); sys2 != sys {
		t.Errorf("system prompt changed with task, document or skill order:\n%s\n---\n%s", sys, sys2)
	}
	for _, want := range []string{"1 to 6 subtasks", `"self"`, "a number, a name, a date, a definition", "analytical-comparison: Compare two or more things along explicit dimensions.", "Output ONLY"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Index(sys, "analytical-comparison") > strings.Index(sys, "summarization:") {
		t.Error("skills are not listed in name order")
	}
	for _, want := range []string{"## Products: lines 6-8", "(text before the first heading: lines 1-2)", "Acme was founded in 1998 in Leeds.", "When was Acme founded?"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q", want)
		}
	}
	if strings.Index(user, "Task:") < strings.Index(user, "</document>") {
		t.Error("task does not come after the document")
	}
	if strings.Contains(user, "1| ") {
		t.Error("a document with headings was sent with line numbers")
	}
	if !strings.Contains(user, `<document lines="10">`) {
		t.Error("document line count is not computed when DocumentLines is unset")
	}
}

func TestRepairPrompt(t *testing.T) {
	raw := "```json\n{\"subtasks\": []}\n```"
	_, err := Parse(raw, Options{})
	if err == nil {
		t.Fatal("expected a parse error")
	}
	golden(t, "repair.golden", RepairPrompt(raw, err))

	cases := []struct {
		name string
		raw  string
		err  error
		want []string
	}{
		{"validation problems one per line", "x", &ValidationError{Problems: []string{"subtask 1: task is empty", "subtask 2: skill is empty"}},
			[]string{"- subtask 1: task is empty\n- subtask 2: skill is empty\n", "<previous_reply>\nx\n</previous_reply>"}},
		{"plain error", "x", errors.New("boom"), []string{"- boom\n"}},
		{"wrapped validation error", "x", errors.Join(errors.New("planner"), &ValidationError{Problems: []string{"p1"}}), []string{"- p1\n"}},
		{"long reply is cut", strings.Repeat("é", maxRepairEcho), nil, []string{"[... cut ...]", "- the reply was not a valid plan"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RepairPrompt(tc.raw, tc.err)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("repair prompt lacks %q:\n%s", w, got)
				}
			}
			if len(got) > maxRepairEcho+1000 {
				t.Errorf("repair prompt is %d bytes, want it bounded", len(got))
			}
			if !strings.Contains(got, "ONLY the corrected JSON plan") {
				t.Error("repair prompt does not ask for JSON only")
			}
		})
	}
}

func TestJSONSchema(t *testing.T) {
	s := JSONSchema()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatalf("schema does not marshal: %v", err)
	}
	golden(t, "schema.golden.json", string(b)+"\n")

	// The schema's field names must be the ones Plan marshals to, or a
	// provider would enforce a shape Parse does not read.
	var generic map[string]any
	if err := json.Unmarshal(mustJSON(t, goodWant()), &generic); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "plan", s, generic)
	sub := generic["subtasks"].([]any)[0].(map[string]any)
	items := s["properties"].(map[string]any)["subtasks"].(map[string]any)["items"].(map[string]any)
	checkKeys(t, "subtask", items, sub)
	ptrSchema := items["properties"].(map[string]any)["context_pointers"].(map[string]any)
	checkKeys(t, "context_pointers", ptrSchema, sub["context_pointers"].(map[string]any))
}

func checkKeys(t *testing.T, what string, schema, value map[string]any) {
	t.Helper()
	props := schema["properties"].(map[string]any)
	for k := range value {
		if _, ok := props[k]; !ok {
			t.Errorf("%s: marshalled field %q is not in the schema", what, k)
		}
	}
	for _, r := range schema["required"].([]any) {
		if _, ok := props[r.(string)]; !ok {
			t.Errorf("%s: required %q has no property", what, r)
		}
	}
}

// TestJSONSchemaPortable keeps the schema inside the subset every provider's
// strict mode accepts: Anthropic rejects numeric bounds and minItems other
// than 0 or 1, and strict modes need additionalProperties false and every
// property required.
func TestJSONSchemaPortable(t *testing.T) {
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxItems", "minLength", "maxLength", "pattern"} {
			if _, ok := node[k]; ok {
				t.Errorf("%s: uses unsupported keyword %q", path, k)
			}
		}
		if n, ok := node["minItems"].(int); ok && n > 1 {
			t.Errorf("%s: minItems %d, want 0 or 1", path, n)
		}
		if props, ok := node["properties"].(map[string]any); ok {
			if node["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			req := map[string]bool{}
			for _, r := range node["required"].([]any) {
				req[r.(string)] = true
			}
			for k, v := range props {
				if !req[k] {
					t.Errorf("%s: property %q is not required", path, k)
				}
				walk(path+"."+k, v.(map[string]any))
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", JSONSchema())
}
