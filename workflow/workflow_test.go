package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/skill"
)

const minimal = `name: demo
capsule: capsule.md
phases:
  - name: one
    skill: a
`

func TestParseDefaults(t *testing.T) {
	w, err := Parse([]byte(minimal), "dir/baton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Workflow{
		Name: "demo", ThresholdFraction: 0.65, State: "specs/state.yaml", Ledger: "specs/ledger.md",
		Capsule: "capsule.md", SubagentReturnTokens: 1500, Flow: "demo", MaxSteps: DefaultMaxSteps,
		Writes: []string{"out/**"},
		Phases: []Phase{{Name: "one", Skill: "a", Line: 4}},
		Path:   "dir/baton.yaml", Dir: "dir",
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseFull(t *testing.T) {
	src := `# comment
name: full
window_tokens: 100000
threshold_fraction: 0.6
state: ./s/state.yaml
ledger: s/ledger.md
capsule: work/capsule.md
skills: my-skills
subagent_return_tokens: 900
agent_cmd: my-agent --print
max_steps: 12
protect: ["secrets/**", "*.pem"]
writes: [out/**, ./docs/drafts/, CHANGELOG.md]
colour: blue
phases:
  - name: a
    skill: x
    expect_tokens: 5000
  - {name: b, skill: y, extra: 1}
`
	w, err := Parse([]byte(src), "baton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Workflow{
		Name: "full", WindowTokens: 100000, ThresholdFraction: 0.6, State: "s/state.yaml", Ledger: "s/ledger.md",
		Capsule: "work/capsule.md", Skills: []string{"my-skills"}, SubagentReturnTokens: 900, Flow: "full",
		AgentCmd: "my-agent --print", MaxSteps: 12, Protect: []string{"secrets/**", "*.pem"},
		Writes: []string{"out/**", "docs/drafts/**", "CHANGELOG.md"},
		Phases: []Phase{{Name: "a", Skill: "x", ExpectTokens: 5000, Line: 16}, {Name: "b", Skill: "y", Line: 19}},
		Path:   "baton.yaml", Dir: ".",
		Warnings: []string{
			`baton.yaml:14: colour: unknown key; baton ignores it`,
			`baton.yaml:19: phases[1].extra: unknown key; baton ignores it`,
		},
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// writes: replaces the default; an empty list lets no step write.
func TestParseWritesEmpty(t *testing.T) {
	for _, src := range []string{"writes: []\n", "writes:\n"} {
		w, err := Parse([]byte(minimal+src), "baton.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if w.Writes == nil || len(w.Writes) != 0 {
			t.Errorf("%q: Writes = %#v, want an empty list", src, w.Writes)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", "f.yaml: is empty"},
		{"not a mapping", "- a\n- b\n", "f.yaml:1: must be a mapping"},
		{"syntax", "name: [\n", "f.yaml:"},
		{"two documents", minimal + "---\nname: x\n", "want one YAML document, found 2"},
		{"no name", "capsule: c\nphases: [{name: a, skill: b}]\n", "f.yaml: name: is required"},
		{"no capsule", "name: n\nphases: [{name: a, skill: b}]\n", "capsule: is required"},
		{"no phases", "name: n\ncapsule: c\n", "phases: is required"},
		{"empty phases", "name: n\ncapsule: c\nphases: []\n", "f.yaml:3: phases: is empty"},
		{"phases not a list", "name: n\ncapsule: c\nphases: {a: b}\n", "phases: must be a list"},
		{"threshold high", minimal + "threshold_fraction: 1\n", "f.yaml:6: threshold_fraction: must lie between 0 and 1"},
		{"threshold zero", minimal + "threshold_fraction: 0\n", "threshold_fraction: must lie between 0 and 1"},
		{"threshold text", minimal + "threshold_fraction: high\n", `threshold_fraction: must be a number, not "high"`},
		{"window negative", minimal + "window_tokens: -5\n", "f.yaml:6: window_tokens: must be a non-negative whole number"},
		{"window fraction", minimal + "window_tokens: 1.5\n", "window_tokens: must be a non-negative whole number"},
		{"return zero", minimal + "subagent_return_tokens: 0\n", "subagent_return_tokens: must be a positive whole number"},
		{"absolute state", minimal + "state: /etc/state.yaml\n", `state: "/etc/state.yaml" must be relative`},
		{"escaping ledger", minimal + "ledger: ../ledger.md\n", `ledger: "../ledger.md" leaves the workspace`},
		{"duplicate key", minimal + "name: again\n", `f.yaml:6: mapping key "name" already defined`},
		{"duplicate phase", "name: n\ncapsule: c\nphases:\n  - {name: a, skill: b}\n  - {name: a, skill: c}\n", `f.yaml:5: phases[1].name: "a" is already the name of phases[0]`},
		{"phase without skill", "name: n\ncapsule: c\nphases:\n  - name: a\n", "f.yaml:4: phases[0].skill: is required"},
		{"phase scalar", "name: n\ncapsule: c\nphases:\n  - a\n", "phases[0]: must be a mapping"},
		{"name list", "name: [a]\ncapsule: c\nphases: [{name: a, skill: b}]\n", "name: must be a non-empty string, not a list"},
		{"same file", minimal + "state: capsule.md\n", "state: is the same file as capsule"},
		{"skills mapping", minimal + "skills: {a: b}\n", "skills: must be a folder or a list of folders"},
		{"max_steps zero", minimal + "max_steps: 0\n", "f.yaml:6: max_steps: must be a positive whole number"},
		{"max_steps negative", minimal + "max_steps: -3\n", "f.yaml:6: max_steps: must be a positive whole number"},
		{"max_steps text", minimal + "max_steps: many\n", `f.yaml:6: max_steps: must be a whole number, not "many"`},
		{"agent_cmd empty", minimal + "agent_cmd: \"\"\n", "f.yaml:6: agent_cmd: must be a non-empty string"},
		{"agent_cmd list", minimal + "agent_cmd: [a, b]\n", "f.yaml:6: agent_cmd: must be a non-empty string, not a list"},
		{"protect bad glob", minimal + "protect:\n  - ok/**\n  - \"secrets/[ab\"\n", `f.yaml:8: protect[1]: "secrets/[ab" is not a valid glob pattern`},
		{"protect absolute", minimal + "protect: [/etc/**]\n", `f.yaml:6: protect[0]: "/etc/**" must be relative to the workspace`},
		{"protect escape", minimal + "protect: \"../other/**\"\n", `f.yaml:6: protect: "../other/**" leaves the workspace`},
		{"protect mapping", minimal + "protect: {a: b}\n", "f.yaml:6: protect: must be a glob pattern or a list of them"},
		{"protect number", minimal + "protect: [3]\n", "f.yaml:6: protect[0]: must be a non-empty string, not 3"},
		{"writes bad glob", minimal + "writes:\n  - out/**\n  - \"docs/{a\"\n", `f.yaml:8: writes[1]: "docs/{a" is not a valid glob pattern`},
		{"writes absolute", minimal + "writes: [/tmp/**]\n", `f.yaml:6: writes[0]: "/tmp/**" must be relative to the workspace`},
		{"writes escape", minimal + "writes: out/../../x/**\n", `f.yaml:6: writes: "out/../../x/**" leaves the workspace`},
		{"writes mapping", minimal + "writes: {out: yes}\n", "f.yaml:6: writes: must be a glob pattern or a list of them"},
		{"writes twice", minimal + "writes: [a]\nwrites: [b]\n", `f.yaml:7: mapping key "writes" already defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse([]byte(tt.src), "f.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", w)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to contain %q", msg, tt.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, make([]byte, MaxFileSize+1), 0o644)
	if _, err := Load(big); !errors.Is(err, ErrInvalid) {
		t.Errorf("Load(big) = %v, want ErrInvalid", err)
	}
}

func newLib(t *testing.T, skills map[string]string) *skill.Library {
	t.Helper()
	lib := skill.NewLibrary()
	for name, next := range skills {
		sk := &skill.Skill{Name: name, Body: "body of " + name}
		if next != "" {
			sk.Metadata = map[string]string{NextSkillKey: next}
		}
		lib.Add(sk)
	}
	return lib
}

func TestValidate(t *testing.T) {
	w, err := Parse([]byte("name: n\ncapsule: c\nphases:\n  - {name: one, skill: a}\n  - {name: two, skill: b}\n  - {name: three, skill: c}\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(newLib(t, map[string]string{"a": "a2", "a2": "", "b": "done", "c": ""})); err != nil {
		t.Errorf("Validate: %v", err)
	}
	err = w.Validate(newLib(t, map[string]string{"a": "ghost", "c": ""}))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate = %v, want ErrInvalid", err)
	}
	for _, want := range []string{`f.yaml:4: phases[0].skill: skill "a" declares next step "ghost"`, `f.yaml:5: phases[1].skill: no skill named "b"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want it to contain %q", err, want)
		}
	}
}

func TestNext(t *testing.T) {
	w := &Workflow{Path: "f.yaml", Phases: []Phase{{Name: "analysis", Skill: "analyse"}, {Name: "implement", Skill: "implement"}, {Name: "report", Skill: "report"}}}
	lib := newLib(t, map[string]string{"analyse": "", "plan": "", "implement": "", "review": "", "report": ""})
	tests := []struct {
		name    string
		current int
		next    string
		lib     *skill.Library
		want    Step
		wantErr error
	}{
		{"same phase", 0, "plan", lib, Step{Continue, 0, "plan"}, nil},
		{"same phase loose name", 1, "Review", lib, Step{Continue, 1, "review"}, nil},
		{"loop on own start", 1, "implement", lib, Step{Continue, 1, "implement"}, nil},
		{"boundary", 0, "implement", lib, Step{Boundary, 1, "implement"}, nil},
		{"skip a phase", 0, "report", lib, Step{Boundary, 2, "report"}, nil},
		{"empty ends phase", 0, "", lib, Step{Boundary, 1, "implement"}, nil},
		{"empty after last", 2, "", lib, Step{Done, 2, ""}, nil},
		{"done", 1, " DONE ", lib, Step{Done, 1, ""}, nil},
		{"backwards", 2, "analyse", lib, Step{}, ErrBackwards},
		{"unknown", 0, "ghost", lib, Step{}, ErrUnknownSkill},
		{"unknown without lib", 0, "ghost", nil, Step{Continue, 0, "ghost"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Next(tt.current, tt.next, tt.lib)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := w.Next(3, "", nil); err == nil {
		t.Error("Next(out of range) succeeded")
	}
}

func TestChooseNext(t *testing.T) {
	sk := &skill.Skill{Name: "a", Metadata: map[string]string{NextSkillKey: " b "}}
	tests := []struct {
		handoff string
		sk      *skill.Skill
		want    string
	}{
		{"", sk, "b"},
		{"c", sk, "c"},
		{"  ", sk, "b"},
		{"", &skill.Skill{Name: "x"}, ""},
		{"", nil, ""},
	}
	for _, tt := range tests {
		if got := ChooseNext(tt.handoff, tt.sk); got != tt.want {
			t.Errorf("ChooseNext(%q) = %q, want %q", tt.handoff, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("phases: [{name: a, skill: b, expect_tokens: 1e99}]\nthreshold_fraction: .nan\n"))
	f.Add([]byte("a: &x {b: *x}\nname: *x\n"))
	f.Add([]byte("- - -\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data, "f.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		if len(w.Phases) == 0 || w.Capsule == "" || w.Name == "" {
			t.Errorf("accepted a workflow missing required keys: %+v", w)
		}
		if w.ThresholdFraction <= 0 || w.ThresholdFraction >= 1 {
			t.Errorf("accepted threshold %v", w.ThresholdFraction)
		}
	})
}

func TestWindow(t *testing.T) {
	tests := []struct {
		set       int
		model     string
		want      int
		wantKnown bool
		threshold int
	}{
		{100000, "anything", 100000, true, 65000},
		{0, "some-unknown-model", 128000, false, 83200},
	}
	for _, tt := range tests {
		w := &Workflow{WindowTokens: tt.set, ThresholdFraction: DefaultThresholdFraction}
		got, known := w.Window(tt.model)
		if got != tt.want || known != tt.wantKnown {
			t.Errorf("Window(%q) with window_tokens %d = %d, %v; want %d, %v", tt.model, tt.set, got, known, tt.want, tt.wantKnown)
		}
		if th := w.ThresholdTokens(got); th != tt.threshold {
			t.Errorf("ThresholdTokens(%d) = %d, want %d", got, th, tt.threshold)
		}
	}
}
