package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestValidateTools(t *testing.T) {
	call := func(id string) ToolCall { return ToolCall{ID: id, Name: "f", Input: json.RawMessage(`{}`)} }
	calls := func(ids ...string) Message {
		m := Message{Role: RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, call(id))
		}
		return m
	}
	results := func(ids ...string) Message {
		m := Message{Role: RoleUser}
		for _, id := range ids {
			m.ToolResults = append(m.ToolResults, ToolResult{CallID: id, Content: "r"})
		}
		return m
	}
	user := Message{Role: RoleUser, Content: "q"}
	tools := []Tool{{Name: "f"}, {Name: "g-2_x"}}
	tests := []struct {
		name   string
		req    Request
		wantOK bool
		want   string
	}{
		{"no tools at all", Request{Messages: []Message{user}}, true, ""},
		{"a full round", Request{Tools: tools, Messages: []Message{user, calls("a", "b"), results("b", "a"), {Role: RoleAssistant, Content: "done"}}}, true, ""},
		{"two rounds", Request{Tools: tools, Messages: []Message{user, calls("a"), results("a"), calls("a"), results("a")}}, true, ""},
		{"results with text", Request{Tools: tools, Messages: []Message{user, calls("a"), {Role: RoleUser, Content: "more", ToolResults: results("a").ToolResults}}}, true, ""},
		{"named choice", Request{Tools: tools, ToolChoice: ToolNamed("g-2_x"), Messages: []Message{user}}, true, ""},
		{"none without tools", Request{ToolChoice: ToolChoiceNone, Messages: []Message{user}}, true, ""},
		{"bad name", Request{Tools: []Tool{{Name: "read file"}}, Messages: []Message{user}}, false, `name "read file"`},
		{"empty name", Request{Tools: []Tool{{}}, Messages: []Message{user}}, false, `name ""`},
		{"duplicate", Request{Tools: []Tool{{Name: "f"}, {Name: "f"}}, Messages: []Message{user}}, false, "defined twice"},
		{"schema that cannot marshal", Request{Tools: []Tool{{Name: "f", Schema: map[string]any{"x": func() {}}}}, Messages: []Message{user}}, false, "schema"},
		{"any without tools", Request{ToolChoice: ToolChoiceAny, Messages: []Message{user}}, false, "no tools defined"},
		{"required without tools", Request{ToolChoice: "required", Messages: []Message{user}}, false, "no tools defined"},
		{"named choice undefined", Request{Tools: tools, ToolChoice: "h", Messages: []Message{user}}, false, `names "h"`},
		{"calls in a user turn", Request{Tools: tools, Messages: []Message{{Role: RoleUser, ToolCalls: []ToolCall{call("a")}}}}, false, "only assistant"},
		{"results in an assistant turn", Request{Tools: tools, Messages: []Message{user, calls("a"), {Role: RoleAssistant, ToolResults: results("a").ToolResults}}}, false, "only user"},
		{"result for an unknown call", Request{Tools: tools, Messages: []Message{user, calls("a"), results("a", "z")}}, false, `call "z"`},
		{"result answered twice", Request{Tools: tools, Messages: []Message{user, calls("a"), results("a", "a")}}, false, `call "a"`},
		{"result for an older call", Request{Tools: tools, Messages: []Message{user, calls("a"), results("a"), calls("b"), results("a", "b")}}, false, `call "a"`},
		{"missing results", Request{Tools: tools, Messages: []Message{user, calls("a", "b", "c"), results("b")}}, false, `calls "a", "c" of the turn before`},
		{"no turn after calls", Request{Tools: tools, Messages: []Message{user, calls("a")}}, false, "no results follow"},
		{"call without id", Request{Tools: tools, Messages: []Message{user, calls(""), results("")}}, false, "needs an id"},
		{"duplicate call id", Request{Tools: tools, Messages: []Message{user, calls("a", "a"), results("a")}}, false, "used twice"},
		{"input not JSON", Request{Tools: tools, Messages: []Message{user,
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "f", Input: json.RawMessage(`{`)}}}, results("a")}}, false, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.ValidateTools()
			if tc.wantOK {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidTools) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrInvalidTools mentioning %s", err, tc.want)
			}
		})
	}
}

func TestToolInputAndDecode(t *testing.T) {
	tests := []struct {
		args      string
		wantInput string
		wantPath  string
		wantErr   string
	}{
		{args: `{"path":"a.md"}`, wantInput: `{"path":"a.md"}`, wantPath: "a.md"},
		{args: "", wantInput: `{}`},
		{args: "  ", wantInput: `{}`},
		{args: `{"path": "a.md`, wantInput: `"{\"path\": \"a.md"`, wantErr: `not valid JSON: {"path": "a.md`},
		{args: `[1,2]`, wantInput: `[1,2]`, wantErr: "cannot unmarshal array"},
		{args: `{"path":7}`, wantInput: `{"path":7}`, wantErr: "cannot unmarshal number"},
	}
	for _, tc := range tests {
		c := ToolCall{ID: "c", Name: "read_file", Input: ToolInput(tc.args)}
		if string(c.Input) != tc.wantInput {
			t.Errorf("ToolInput(%q) = %s, want %s", tc.args, c.Input, tc.wantInput)
		}
		var in struct{ Path string }
		err := c.Decode(&in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Decode(%s): %v", c.Input, err)
		case tc.wantErr != "" && (!errors.Is(err, ErrBadToolInput) || !strings.Contains(err.Error(), tc.wantErr) ||
			!strings.Contains(err.Error(), "read_file")):
			t.Errorf("Decode(%s): error %v, want one mentioning %s", c.Input, err, tc.wantErr)
		case in.Path != tc.wantPath:
			t.Errorf("Decode(%s): path %q", c.Input, in.Path)
		}
	}
}

func TestToolChoiceModes(t *testing.T) {
	tests := []struct {
		choice     ToolChoice
		mode, tool string
	}{
		{"", "", ""}, {ToolChoiceAuto, "auto", ""}, {ToolChoiceAny, "any", ""}, {"required", "any", ""},
		{ToolChoiceNone, "none", ""}, {ToolNamed("read_file"), "tool", "read_file"},
	}
	for _, tc := range tests {
		if tc.choice.Mode() != tc.mode || tc.choice.Tool() != tc.tool {
			t.Errorf("%q: mode %q tool %q, want %q %q", tc.choice, tc.choice.Mode(), tc.choice.Tool(), tc.mode, tc.tool)
		}
	}
}

func TestAppendToolRound(t *testing.T) {
	resp := &Response{Text: "Reading.", StopReason: "tool_use",
		ToolCalls: []ToolCall{{ID: "a", Name: "read_file", Input: json.RawMessage(`{"path":"x"}`)}, {ID: "b", Name: "finish"}}}
	if !resp.WantsTools() || (&Response{Text: "done"}).WantsTools() || (*Response)(nil).WantsTools() {
		t.Error("WantsTools is wrong")
	}
	msgs := []Message{{Role: RoleUser, Content: "go"}}
	msgs = AppendToolRound(msgs, resp, resp.ToolCalls[0].Result("content"), resp.ToolCalls[1].ErrorResult("no"))
	want := []Message{
		{Role: RoleUser, Content: "go"},
		{Role: RoleAssistant, Content: "Reading.", ToolCalls: resp.ToolCalls},
		{Role: RoleUser, ToolResults: []ToolResult{{CallID: "a", Content: "content"}, {CallID: "b", Content: "no", IsError: true}}},
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if err := (&Request{Tools: []Tool{{Name: "read_file"}, {Name: "finish"}}, Messages: msgs}).ValidateTools(); err != nil {
		t.Errorf("a round built by the helpers is invalid: %v", err)
	}
	// A final answer appends only the assistant turn.
	if got := AppendToolRound(nil, &Response{Text: "done"}); len(got) != 1 || got[0].Role != RoleAssistant {
		t.Errorf("final round %+v", got)
	}
}

func TestPromptText(t *testing.T) {
	plain := Message{Role: RoleUser, Content: "just text"}
	if plain.PromptText() != "just text" {
		t.Errorf("plain message counts %q", plain.PromptText())
	}
	m := Message{Role: RoleAssistant, Content: "Reading.", ToolCalls: []ToolCall{{ID: "a", Name: "read_file", Input: json.RawMessage(`{"path":"x"}`)}, {ID: "b", Name: "finish"}}}
	if got, want := m.PromptText(), "Reading.\nread_file {\"path\":\"x\"}\nfinish {}"; got != want {
		t.Errorf("PromptText %q, want %q", got, want)
	}
	r := Message{Role: RoleUser, ToolResults: []ToolResult{{CallID: "a", Content: "one"}, {CallID: "b", Content: "two"}}}
	if r.PromptText() != "one\ntwo" {
		t.Errorf("results count %q", r.PromptText())
	}
	tool := Tool{Name: "finish", Description: "End."}
	if got := tool.PromptText(); got != "finish\nEnd.\n{\"type\":\"object\",\"properties\":{}}" {
		t.Errorf("tool text %q", got)
	}
}

// Messages without tools marshal as before, so stored records keep their
// shape.
func TestMessageJSONUnchanged(t *testing.T) {
	b, err := json.Marshal(Message{Role: RoleUser, Content: "q"})
	if err != nil || string(b) != `{"role":"user","content":"q"}` {
		t.Errorf("%s %v", b, err)
	}
}

// The error a model reads back is valid UTF-8 even when the bound falls
// inside a character of the arguments it sent.
func TestDecodeErrorKeepsCharactersWhole(t *testing.T) {
	s := strings.Repeat("a", 199) + "日本語" + strings.Repeat("b", 300)
	in, _ := json.Marshal(s)
	var v struct{}
	err := ToolCall{ID: "1", Name: "t", Input: in}.Decode(&v)
	if err == nil || !errors.Is(err, ErrBadToolInput) {
		t.Fatalf("Decode = %v", err)
	}
	if !utf8.ValidString(err.Error()) || !strings.Contains(err.Error(), "a日…") {
		t.Errorf("error %q is cut inside a character", err)
	}
}
