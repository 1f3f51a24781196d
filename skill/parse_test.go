package skill

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fields lists "severity field" for each problem, in order, which is what
// the tables below pin down; messages are covered by the golden file.
func fields(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Severity.String()+" "+p.Field)
	}
	return out
}

func TestPublicSkillsLoad(t *testing.T) {
	results, err := Scan("testdata/public")
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 5 {
		t.Fatalf("got %d public skills, want at least 5", len(results))
	}
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Path, r.Err)
			continue
		}
		if HasErrors(r.Problems) {
			t.Errorf("%s: error problems without an error: %v", r.Path, r.Problems)
		}
		if got := filepath.Base(filepath.Dir(r.Path)); r.Skill.Name != got {
			t.Errorf("%s: name %q, want the folder name %q", r.Path, r.Skill.Name, got)
		}
		if r.Skill.Description == "" || r.Skill.Body == "" {
			t.Errorf("%s: empty description or body", r.Path)
		}
		if strings.HasPrefix(r.Skill.Body, "\n") || strings.HasPrefix(r.Skill.Body, "---") {
			t.Errorf("%s: body starts with %q", r.Path, r.Skill.Body[:10])
		}
	}
}

func TestVariantsLoadWithWarnings(t *testing.T) {
	tests := []struct {
		dir      string
		warnings []string
		check    func(t *testing.T, s *Skill)
	}{
		{"quoted-description", nil, func(t *testing.T, s *Skill) {
			want := "Use when: the description holds a colon, which needs quotes in YAML."
			if s.Name != "quoted-description" || s.Description != want || s.License != "Apache-2.0" {
				t.Errorf("got %q %q %q", s.Name, s.Description, s.License)
			}
		}},
		{"folded-description", nil, func(t *testing.T, s *Skill) {
			want := "A description written as a folded block scalar, which YAML joins into one line."
			if s.Description != want {
				t.Errorf("description %q, want %q", s.Description, want)
			}
		}},
		{"literal-description", nil, func(t *testing.T, s *Skill) {
			want := "A description written as a literal block scalar.\nIts line breaks are kept."
			if s.Description != want || s.Compatibility != "Needs nothing beyond a model." {
				t.Errorf("got %q %q", s.Description, s.Compatibility)
			}
		}},
		// model: is not in the specification, but suites use it and baton
		// honours it (see the runner), so it is read, not warned about.
		{"host-keys", []string{"warning effort", "warning version", "warning user-invocable", "warning argument-hint", "warning disable-model-invocation"}, func(t *testing.T, s *Skill) {
			if s.Model != "some-model" {
				t.Errorf("model %q, want some-model", s.Model)
			}
		}},
		{"folder-mismatch", []string{"warning name"}, func(t *testing.T, s *Skill) {
			if s.Name != "another-name" {
				t.Errorf("name %q", s.Name)
			}
		}},
		{"bad-name-chars", []string{"warning name", "warning name", "warning name", "warning name"}, nil},
		{"long-description", []string{"warning description"}, nil},
		{"long-compatibility", []string{"warning compatibility"}, nil},
		{"crlf", nil, func(t *testing.T, s *Skill) {
			if s.Description != "Written with Windows line endings\nacross two lines." || s.OutputHint != "One line." || strings.Contains(s.Body, "\r") {
				t.Errorf("got %q %q %q", s.Description, s.OutputHint, s.Body)
			}
		}},
		{"bom", []string{"warning file"}, func(t *testing.T, s *Skill) {
			if s.Name != "bom" {
				t.Errorf("name %q", s.Name)
			}
		}},
		{"metadata-types", []string{"warning metadata.version", "warning metadata.count", "warning metadata.stable", "warning metadata.empty", "warning metadata.tags"}, func(t *testing.T, s *Skill) {
			want := map[string]string{"author": "someone", "version": "1.0", "count": "0x10", "stable": "true", "empty": ""}
			if diff := cmp.Diff(want, s.Metadata); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		}},
		{"allowed-tools-list", nil, func(t *testing.T, s *Skill) {
			if diff := cmp.Diff([]string{"Read", "Bash(git status:*)"}, s.AllowedTools); diff != "" {
				t.Error(diff)
			}
		}},
		{"allowed-tools-string", nil, func(t *testing.T, s *Skill) {
			if diff := cmp.Diff([]string{"Bash(git add:*)", "Read", "Grep"}, s.AllowedTools); diff != "" {
				t.Error(diff)
			}
		}},
		{"empty-body", []string{"warning body"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s, ps, err := LoadDir(filepath.Join("testdata/variants", tt.dir))
			if err != nil {
				t.Fatalf("LoadDir: %v", err)
			}
			if diff := cmp.Diff(tt.warnings, fields(ps)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, ps)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestInvalidSkillsFail(t *testing.T) {
	tests := []struct {
		dir    string
		errors []string
	}{
		{"no-frontmatter", []string{"error frontmatter"}},
		{"not-at-start", []string{"error frontmatter"}},
		{"invalid-yaml", []string{"error frontmatter"}},
		{"missing-name", []string{"error name"}},
		{"missing-description", []string{"error description"}},
		{"list-frontmatter", []string{"error frontmatter"}},
		{"unterminated", []string{"error frontmatter"}},
		{"name-not-string", []string{"error name", "error description"}},
		{"empty-description", []string{"error description"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s, ps, err := LoadDir(filepath.Join("testdata/invalid", tt.dir))
			if s != nil {
				t.Errorf("got a skill %q from an invalid file", s.Name)
			}
			if !errors.Is(err, ErrInvalidSkill) {
				t.Fatalf("err = %v, want ErrInvalidSkill", err)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("err is %T, want *InvalidError", err)
			}
			var errs []Problem
			for _, p := range ps {
				if p.Severity == Error {
					errs = append(errs, p)
				}
			}
			if diff := cmp.Diff(tt.errors, fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(errs, ie.Problems); diff != "" {
				t.Errorf("InvalidError problems differ from the returned ones:\n%s", diff)
			}
			for _, p := range ps {
				if line := p.String(); strings.Contains(line, "\n") || !strings.Contains(line, p.Path) {
					t.Errorf("problem is not one line naming its path: %q", line)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestProblemsGolden pins every message baton prints for the test skills.
func TestProblemsGolden(t *testing.T) {
	var lines []string
	for _, dir := range []string{"testdata/public", "testdata/variants", "testdata/invalid"} {
		results, err := Scan(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			for _, p := range r.Problems {
				lines = append(lines, filepath.ToSlash(p.String()))
			}
		}
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := "testdata/problems.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./skill -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("problems differ from %s (-want +got):\n%s", golden, diff)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		path     string
		problems []string
		wantErr  bool
		check    func(t *testing.T, s *Skill)
	}{
		{name: "minimal", in: "---\nname: a\ndescription: b\n---\nbody\n", problems: nil,
			check: func(t *testing.T, s *Skill) {
				if s.Name != "a" || s.Description != "b" || s.Body != "body" || s.Path != "x.md" {
					t.Errorf("got %+v", s)
				}
			}},
		{name: "empty file", in: "", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "only opening fence", in: "---", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "empty frontmatter", in: "---\n---\nbody", problems: []string{"error name", "error description"}, wantErr: true},
		{name: "comment-only frontmatter", in: "---\n# nothing\n---\nbody", problems: []string{"error name", "error description"}, wantErr: true},
		{name: "scalar frontmatter", in: "---\njust text\n---\nbody", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "null name", in: "---\nname:\ndescription: d\n---\nbody", problems: []string{"error name"}, wantErr: true},
		{name: "boolean description", in: "---\nname: a\ndescription: true\n---\nbody", problems: []string{"error description"}, wantErr: true},
		{name: "duplicate key", in: "---\nname: a\nname: b\ndescription: d\n---\nbody", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "indented fence", in: "  ---\nname: a\ndescription: d\n---\nbody", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "fence with trailing spaces", in: "--- \nname: a\ndescription: d\n---  \nbody", problems: nil},
		{name: "markdown rule later is not frontmatter", in: "# Title\n\n---\nname: a\n---\n", problems: []string{"error frontmatter"}, wantErr: true},
		{name: "folder match", in: "---\nname: a\ndescription: d\n---\nbody", path: "skills/a/SKILL.md", problems: nil},
		{name: "folder mismatch", in: "---\nname: a\ndescription: d\n---\nbody", path: "skills/b/SKILL.md", problems: []string{"warning name"}},
		{name: "name too long", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nbody", problems: []string{"warning name"}},
		{name: "license number", in: "---\nname: a\ndescription: d\nlicense: 2.0\n---\nbody", problems: []string{"warning license"},
			check: func(t *testing.T, s *Skill) {
				if s.License != "2" && s.License != "2.0" {
					t.Errorf("license %q", s.License)
				}
			}},
		{name: "compatibility list", in: "---\nname: a\ndescription: d\ncompatibility: [x]\n---\nbody", problems: []string{"warning compatibility"}},
		{name: "metadata list", in: "---\nname: a\ndescription: d\nmetadata: [x]\n---\nbody", problems: []string{"warning metadata"}},
		{name: "allowed-tools mapping", in: "---\nname: a\ndescription: d\nallowed-tools: {a: b}\n---\nbody", problems: []string{"warning allowed-tools"}},
		{name: "allowed-tools list with number", in: "---\nname: a\ndescription: d\nallowed-tools: [Read, 3, [x]]\n---\nbody", problems: []string{"warning allowed-tools", "warning allowed-tools"},
			check: func(t *testing.T, s *Skill) {
				if diff := cmp.Diff([]string{"Read", "3"}, s.AllowedTools); diff != "" {
					t.Error(diff)
				}
			}},
		{name: "invalid utf-8 body", in: "---\nname: a\ndescription: d\n---\nbody \xff", problems: []string{"warning file"}},
		{name: "output hint", in: "---\nname: a\ndescription: d\nmetadata:\n  output-hint: Be brief.\n---\nbody",
			check: func(t *testing.T, s *Skill) {
				if s.OutputHint != "Be brief." {
					t.Errorf("output hint %q", s.OutputHint)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "x.md"
			}
			s, ps, err := Parse([]byte(tt.in), path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v (problems %v)", err, tt.wantErr, ps)
			}
			if (s == nil) != tt.wantErr {
				t.Errorf("skill = %v with err = %v", s, err)
			}
			if diff := cmp.Diff(tt.problems, fields(ps)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, ps)
			}
			if tt.check != nil && s != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestYAMLErrorNamesFileLine(t *testing.T) {
	_, ps, _ := Parse([]byte("---\nname: a\ndescription: Use when: x\n---\nbody"), "x.md")
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "line 3") || !strings.Contains(ps[0].Message, "quote") {
		t.Errorf("got %v, want one problem naming line 3 and suggesting quotes", ps)
	}
}

func TestSplitTools(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Read", []string{"Read"}},
		{"Read Grep  Glob", []string{"Read", "Grep", "Glob"}},
		{"Read, Grep,Glob", []string{"Read", "Grep", "Glob"}},
		{"Bash(git add:*) Bash(jq:*) Read", []string{"Bash(git add:*)", "Bash(jq:*)", "Read"}},
		{"Bash(a, b) x", []string{"Bash(a, b)", "x"}},
		{"Bash(unclosed x", []string{"Bash(unclosed x"}},
		{") Read", []string{")", "Read"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitTools(tt.in)); diff != "" {
			t.Errorf("splitTools(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"---",
		"---\n---\n",
		"---\nname: a\ndescription: b\n---\nbody\n",
		"\xEF\xBB\xBF---\r\nname: a\r\ndescription: |\r\n  x\r\n---\r\n",
		"---\nname: a\ndescription: Use when: x\n---\n",
		"---\n- a\n---\n",
		"---\nname: [\n---\n",
		"---\nname: a\ndescription: b\nmetadata:\n  v: 1.0\n  l: [1]\nallowed-tools: [a, 1, {b: c}]\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n",
		"---\n? [a]\n: b\n---\n",
		"---\nname: !!binary aGk=\ndescription: b\n---\n",
	}
	for _, dir := range []string{"testdata/public", "testdata/variants", "testdata/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*", FileName))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && len(data) < 4096 {
				seeds = append(seeds, string(data))
			}
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ps, err := Parse(data, "f/SKILL.md")
		if (err != nil) != HasErrors(ps) {
			t.Fatalf("err = %v but problems = %v", err, ps)
		}
		if (err == nil) != (s != nil) {
			t.Fatalf("skill %v with err %v", s, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidSkill) {
			t.Fatalf("err %v does not wrap ErrInvalidSkill", err)
		}
		for _, p := range ps {
			if p.Path != "f/SKILL.md" || p.Field == "" || p.Message == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		if s != nil && (strings.TrimSpace(s.Name) == "" || s.Description == "") {
			t.Fatalf("loaded a skill without name or description: %+v", s)
		}
	})
}

func TestOversizeFrontmatter(t *testing.T) {
	in := "---\nname: a\ndescription: d\nx: " + strings.Repeat("y", maxFrontmatter) + "\n---\nbody"
	_, ps, err := Parse([]byte(in), "x.md")
	if !errors.Is(err, ErrInvalidSkill) || len(ps) != 1 || ps[0].Field != "frontmatter" {
		t.Errorf("got %v %v, want one frontmatter error", ps, err)
	}
}
