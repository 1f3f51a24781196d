package plan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const goodPlan = `{"subtasks": [
  {"task": "What year was the company founded?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "1998"},
  {"task": "Compare the two pricing models.", "skill": "analytical-comparison", "context_pointers": {"sections": ["Pricing"], "line_ranges": [[40, 52]]}}
], "reasoning": "One lookup, one comparison."}`

func goodWant() *Plan {
	return &Plan{
		Subtasks: []Subtask{
			{Task: "What year was the company founded?", Skill: "self", Answer: "1998"},
			{Task: "Compare the two pricing models.", Skill: "analytical-comparison",
				ContextPointers: Pointers{Sections: []string{"Pricing"}, LineRanges: [][2]int{{40, 52}}}},
		},
		Reasoning: "One lookup, one comparison.",
	}
}

// delegated builds the raw JSON of a one-subtask plan around the given
// subtask object body.
func delegated(body string) string {
	return `{"subtasks": [{` + body + `}], "reasoning": "r"}`
}

func TestParseTolerates(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want *Plan
	}{
		{"plain", goodPlan, goodWant()},
		{"json fence", "```json\n" + goodPlan + "\n```", goodWant()},
		{"bare fence", "```\n" + goodPlan + "\n```\n", goodWant()},
		{"prose around", "Here is the plan you asked for:\n\n" + goodPlan + "\n\nLet me know if {anything} should change.", goodWant()},
		{"prose with braces first", "I will use {sections} and {line ranges}.\n" + goodPlan, goodWant()},
		{"unbalanced brace in prose", "Note: { is not closed here.\n```json\n" + goodPlan + "\n```", goodWant()},
		{"bom and whitespace", "\ufeff  \n\t" + goodPlan + "\n\n", goodWant()},
		{"trailing commas", strings.NewReplacer(`"1998"}`, `"1998",}`, `"One lookup, one comparison."}`, `"One lookup, one comparison.",}`, `[[40, 52]]`, `[[40, 52],]`).Replace(goodPlan), goodWant()},
		{"wrapped in plan key", `{"plan": ` + goodPlan + `}`, goodWant()},
		{"camel case keys", strings.NewReplacer(`context_pointers`, `contextPointers`, `line_ranges`, `lineRanges`).Replace(goodPlan), goodWant()},
		{
			"braces and quotes inside strings",
			`{"subtasks": [{"task": "Explain the {x} \"}\" template", "skill": "summarization", "context_pointers": {"sections": ["A } B"]}}], "reasoning": "uses { and }"}`,
			&Plan{Subtasks: []Subtask{{Task: `Explain the {x} "}" template`, Skill: "summarization", ContextPointers: Pointers{Sections: []string{"A } B"}}}}, Reasoning: "uses { and }"},
		},
		{
			"range as string",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": ["12-40", "50–60", "L70-L72", "80"]}`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{LineRanges: [][2]int{{12, 40}, {50, 60}, {70, 72}, {80, 80}}}}}, Reasoning: "r"},
		},
		{
			"range as one string list",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": "12-40, 50:60"}`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{LineRanges: [][2]int{{12, 40}, {50, 60}}}}}, Reasoning: "r"},
		},
		{
			"range as object",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [{"start": 12, "end": 40}, {"from": 3, "to": 4}, {"line": 9}]}`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{LineRanges: [][2]int{{12, 40}, {3, 4}, {9, 9}}}}}, Reasoning: "r"},
		},
		{
			"single line and bare pair",
			`{"subtasks": [{"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[12]]}}, {"task": "u", "skill": "critique", "context_pointers": {"line_ranges": [5, 9]}}]}`,
			&Plan{Subtasks: []Subtask{
				{Task: "t", Skill: "critique", ContextPointers: Pointers{LineRanges: [][2]int{{12, 12}}}},
				{Task: "u", Skill: "critique", ContextPointers: Pointers{LineRanges: [][2]int{{5, 9}}}},
			}},
		},
		{
			"sections as single string",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"sections": "Results"}`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"Results"}}}}, Reasoning: "r"},
		},
		{
			"context_pointers as a bare list",
			delegated(`"task": "t", "skill": "critique", "context_pointers": ["Results", "Methods"]`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"Results", "Methods"}}}}, Reasoning: "r"},
		},
		{
			"heading markers copied from the outline",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"sections": ["## Results", "#1 priority", "  # Methods "]}`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"Results", "#1 priority", "Methods"}}}}, Reasoning: "r"},
		},
		{
			"pointers on the subtask itself",
			delegated(`"task": "t", "skill": "critique", "sections": ["Results"], "line_ranges": [[1, 2]]`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"Results"}, LineRanges: [][2]int{{1, 2}}}}}, Reasoning: "r"},
		},
		{
			"skill case and spaces",
			delegated(`"task": "t", "skill": "  Fact   Extraction "`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "fact-extraction"}}, Reasoning: "r"},
		},
		{
			"Self capitalised with numeric answer",
			delegated(`"task": "How many?", "skill": "Self", "answer": 42`),
			&Plan{Subtasks: []Subtask{{Task: "How many?", Skill: "self", Answer: "42"}}, Reasoning: "r"},
		},
		{
			"lone subtask object",
			`{"subtasks": {"task": "t", "skill": "self", "answer": "a"}}`,
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "self", Answer: "a"}}},
		},
		{
			"unknown skill is not an error",
			delegated(`"task": "t", "skill": "astrology"`),
			&Plan{Subtasks: []Subtask{{Task: "t", Skill: "astrology"}}, Reasoning: "r"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.raw, Options{Lines: 100})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Plan{}, "Warnings")); diff != "" {
				t.Errorf("plan mismatch (-want +got):\n%s", diff)
			}
			if err := got.Validate(Options{Lines: 100}); err != nil {
				t.Errorf("parsed plan does not validate: %v", err)
			}
		})
	}
}

func TestParseRepairsWithWarnings(t *testing.T) {
	cases := []struct {
		name     string
		raw      string
		want     Subtask
		wantWarn string
	}{
		{
			"answer on delegated subtask is dropped",
			delegated(`"task": "t", "skill": "summarization", "answer": "guess"`),
			Subtask{Task: "t", Skill: "summarization"},
			"answer dropped",
		},
		{
			"answer with no skill is taken as self",
			delegated(`"task": "t", "skill": "", "answer": "1998"`),
			Subtask{Task: "t", Skill: "self", Answer: "1998"},
			`taken as "self"`,
		},
		{
			"empty section name is ignored",
			delegated(`"task": "t", "skill": "critique", "context_pointers": {"sections": ["", "Results"]}`),
			Subtask{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"Results"}}},
			"section 1 was empty",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.raw, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Subtasks[0], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("subtask mismatch (-want +got):\n%s", diff)
			}
			if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], tc.wantWarn) {
				t.Errorf("warnings = %q, want one containing %q", got.Warnings, tc.wantWarn)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	many := `{"subtasks": [` + strings.Repeat(`{"task": "t", "skill": "self", "answer": "a"},`, 7) + `{"task": "t", "skill": "self", "answer": "a"}]}`
	cases := []struct {
		name   string
		raw    string
		opts   Options
		want   []string // every problem, in order
		noJSON bool
	}{
		{"prose only", "I think the answer is 42.", Options{}, []string{"no JSON object found; reply with only the JSON plan"}, true},
		{"empty", "", Options{}, []string{"no JSON object found; reply with only the JSON plan"}, true},
		{"cut off", `{"subtasks": [{"task": "t", "skill": "self"`, Options{}, []string{"the JSON object is not closed; the output may have been cut off"}, false},
		{"not a plan", `{"answer": "42"}`, Options{}, []string{`no JSON object has a "subtasks" field`}, false},
		{"no subtasks", `{"subtasks": [], "reasoning": "nothing to do"}`, Options{}, []string{"plan has no subtasks; give at least 1"}, false},
		{"too many default", many, Options{}, []string{"plan has 8 subtasks; the maximum is 6, so merge related subtasks"}, false},
		{"too many custom", many, Options{MaxSubtasks: 3}, []string{"plan has 8 subtasks; the maximum is 3, so merge related subtasks"}, false},
		{"subtasks not a list", `{"subtasks": "do it"}`, Options{}, []string{`"subtasks" must be a list of objects`}, false},
		{"subtask not object", `{"subtasks": ["do it"]}`, Options{}, []string{"subtask 1: is not a JSON object", "subtask 1: task is empty", `subtask 1: skill is empty; name a skill from the library or "self"`}, false},
		{"empty task", delegated(`"task": " ", "skill": "critique"`), Options{}, []string{"subtask 1: task is empty"}, false},
		{"empty skill", delegated(`"task": "t", "skill": ""`), Options{}, []string{`subtask 1: skill is empty; name a skill from the library or "self"`}, false},
		{"missing skill", delegated(`"task": "t"`), Options{}, []string{`subtask 1: skill is empty; name a skill from the library or "self"`}, false},
		{"self without answer", delegated(`"task": "t", "skill": "self"`), Options{}, []string{`subtask 1: skill is "self" but answer is empty; give the answer inline or delegate the subtask to a skill`}, false},
		{"zero line", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[0, 5]]}`), Options{}, []string{"subtask 1: line range [0, 5] is out of range; lines are numbered from 1"}, false},
		{"negative line", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[-3, 5]]}`), Options{}, []string{"subtask 1: line range [-3, 5] is out of range; lines are numbered from 1"}, false},
		{"reversed", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": ["40-12"]}`), Options{}, []string{"subtask 1: line range [40, 12] is reversed; the start must not be after the end"}, false},
		{"beyond document", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[90, 120]]}`), Options{Lines: 100}, []string{"subtask 1: line range [90, 120] ends after the last line of the document (100)"}, false},
		{"garbage range", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": ["intro"]}`), Options{}, []string{`subtask 1: line range 1 ("intro") is not a pair of line numbers like [12, 40]`}, false},
		{"fractional line", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[1.5, 3]]}`), Options{}, []string{"subtask 1: line range 1 (1.5) is not a whole line number"}, false},
		{"triple", delegated(`"task": "t", "skill": "critique", "context_pointers": {"line_ranges": [[1, 2, 3]]}`), Options{}, []string{"subtask 1: line range 1 ([1,2,3]) is not a pair of line numbers like [12, 40]"}, false},
		{"pointers not an object", delegated(`"task": "t", "skill": "critique", "context_pointers": 7`), Options{}, []string{"subtask 1: context_pointers is not an object"}, false},
		{"section not string", delegated(`"task": "t", "skill": "critique", "context_pointers": {"sections": [7]}`), Options{}, []string{"subtask 1: section 1 is not a string"}, false},
		{"malformed", "```json\n{\"subtasks\": [{\"task\": \"t\" \"skill\": \"self\"}]}\n```", Options{}, []string{"the JSON object is malformed: invalid character '\"' after object key:value pair"}, false},
		{
			"every problem listed",
			`{"subtasks": [{"task": "", "skill": "critique"}, {"task": "b", "skill": ""}, {"task": "c", "skill": "self"}]}`,
			Options{},
			[]string{"subtask 1: task is empty", `subtask 2: skill is empty; name a skill from the library or "self"`, `subtask 3: skill is "self" but answer is empty; give the answer inline or delegate the subtask to a skill`},
			false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.raw, tc.opts)
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error", p)
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("error %v does not wrap ErrInvalidPlan", err)
			}
			if got := errors.Is(err, ErrNoJSON); got != tc.noJSON {
				t.Errorf("errors.Is(err, ErrNoJSON) = %v, want %v", got, tc.noJSON)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			if diff := cmp.Diff(tc.want, ve.Problems); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
			for _, p := range tc.want {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("Error() = %q, does not quote %q", err.Error(), p)
				}
			}
		})
	}
}

func TestValidateCanonical(t *testing.T) {
	cases := []struct {
		name string
		p    *Plan
		want []string
	}{
		{"nil plan", nil, []string{"plan is missing"}},
		{"good", goodWant(), nil},
		{"delegated with answer", &Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", Answer: "x"}}},
			[]string{`subtask 1: answer is set but skill is "critique"; only "self" subtasks carry an answer`}},
		{"empty section", &Plan{Subtasks: []Subtask{{Task: "t", Skill: "critique", ContextPointers: Pointers{Sections: []string{"A", " "}}}}},
			[]string{"subtask 1: section 2 is empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate(Options{})
			var got []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				got = ve.Problems
			} else if err != nil {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarshalUsesEmptyLists(t *testing.T) {
	p := &Plan{Subtasks: []Subtask{{Task: "t", Skill: "self", Answer: "a"}, {Task: "u", Skill: "critique"}}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"subtasks":[{"task":"t","skill":"self","context_pointers":{"sections":[],"line_ranges":[]},"answer":"a"},{"task":"u","skill":"critique","context_pointers":{"sections":[],"line_ranges":[]}}],"reasoning":""}`
	if string(b) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", b, want)
	}
	b, err = json.Marshal(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"subtasks":[],"reasoning":""}`; string(b) != want {
		t.Errorf("Marshal(empty) = %s, want %s", b, want)
	}
	// A marshalled plan must parse back to itself.
	back, err := Parse(string(mustJSON(t, goodWant())), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goodWant(), back, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSkillHelpers(t *testing.T) {
	lib := []string{"fact_extraction", "analytical-comparison", "critique"}
	p := &Plan{Subtasks: []Subtask{
		{Task: "a", Skill: "fact-extraction"},
		{Task: "b", Skill: "Analytical Comparison"},
		{Task: "c", Skill: "self", Answer: "x"},
		{Task: "d", Skill: "astrology"},
		{Task: "e", Skill: "astrology"},
	}}
	known := func(s string) bool { _, ok := MatchSkill(s, lib); return ok }
	if got, want := UnknownSkills(p, known), []string{"astrology"}; !cmp.Equal(got, want) {
		t.Errorf("UnknownSkills = %q, want %q", got, want)
	}
	exact := func(s string) bool { return s == "critique" }
	if got, want := UnknownSkills(p, exact), []string{"fact-extraction", "Analytical Comparison", "astrology"}; !cmp.Equal(got, want) {
		t.Errorf("UnknownSkills(exact) = %q, want %q", got, want)
	}
	if got, want := p.ResolveSkills(lib), []string{"astrology"}; !cmp.Equal(got, want) {
		t.Errorf("ResolveSkills = %q, want %q", got, want)
	}
	var skills []string
	for _, st := range p.Subtasks {
		skills = append(skills, st.Skill)
	}
	if want := []string{"fact_extraction", "analytical-comparison", "self", "astrology", "astrology"}; !cmp.Equal(skills, want) {
		t.Errorf("resolved skills = %q, want %q", skills, want)
	}
	if _, ok := MatchSkill("", lib); ok {
		t.Error("MatchSkill matched an empty name")
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		goodPlan,
		"```json\n" + goodPlan + "\n```",
		"prose {not json} " + goodPlan + " trailing {",
		`{"plan": {"subtasks": {"task": "t", "skill": "Self", "answer": 1}}}`,
		delegated(`"task": "t", "skill": "x", "context_pointers": {"line_ranges": ["1-2", {"start": 3}, [4], 5, "L6-L7"], "sections": "A"}`),
		delegated(`"task": "t", "skill": "x", "context_pointers": {"line_ranges": [[1e300, -1e300]]}`),
		`{"subtasks": [{"task": "t", "skill": "self", "answer": "a",},],}`,
		`{"subtasks": [{"task": "\"}{", "skill": "self", "answer": "\\"}]}`,
		"\ufeff{}",
		"{{{{",
		"",
	}
	for _, s := range seeds {
		f.Add(s, 0, 0)
	}
	f.Fuzz(func(t *testing.T, raw string, max, lines int) {
		opts := Options{MaxSubtasks: max % 20, Lines: lines % 10000}
		p, err := Parse(raw, opts)
		if err != nil {
			if !errors.Is(err, ErrInvalidPlan) {
				t.Fatalf("error %v does not wrap ErrInvalidPlan", err)
			}
			return
		}
		if err := p.Validate(opts); err != nil {
			t.Fatalf("Parse returned a plan that does not validate: %v", err)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("parsed plan does not marshal: %v", err)
		}
	})
}
