package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/tokens"
	"github.com/google/go-cmp/cmp"
)

var builtinNames = []string{
	"analytical-comparison", "causal-reasoning", "classification", "critique",
	"fact-extraction", "gap-analysis", "lookup", "structured-synthesis", "summarization",
}

func TestBuiltinsAreValidAndComplete(t *testing.T) {
	lib := Builtins()
	if diff := cmp.Diff(builtinNames, lib.Names()); diff != "" {
		t.Fatalf("built-in names (-want +got):\n%s", diff)
	}
	all := append(lib.List(), Generic())
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			data, err := builtinFS.ReadFile(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			_, ps, err := Parse(data, s.Path)
			if err != nil || len(ps) != 0 {
				t.Fatalf("built-in has problems: %v %v", err, ps)
			}
			if !s.BuiltIn || s.Source() != "built-in" {
				t.Errorf("BuiltIn = %v, Source = %q", s.BuiltIn, s.Source())
			}
			if strings.Contains(s.Description, "\n") || len(s.Description) > 160 {
				t.Errorf("description is not a crisp one-liner: %q", s.Description)
			}
			if s.OutputHint == "" {
				t.Error("no output hint")
			}
			// The body is a cached system prompt: long enough to say how to
			// work, short enough to leave the slice most of the budget.
			if n := tokens.Count(s.Body); n < 150 || n > 900 {
				t.Errorf("body is %d tokens, want 150..900", n)
			}
			for _, rule := range []string{"context you are given", "evidence", "concise"} {
				if !strings.Contains(strings.ToLower(s.Body), rule) {
					t.Errorf("body does not mention %q", rule)
				}
			}
		})
	}
}

func TestGenericIsNotListed(t *testing.T) {
	g := Generic()
	if g.Name == "" || g.Body == "" {
		t.Fatalf("generic skill is empty: %+v", g)
	}
	if _, ok := Builtins().Get(g.Name); ok {
		t.Errorf("generic skill %q is in the library", g.Name)
	}
}

func TestGet(t *testing.T) {
	lib := Builtins()
	tests := []struct {
		query string
		want  string
	}{
		{"fact-extraction", "fact-extraction"},
		{"fact_extraction", "fact-extraction"},
		{"Fact Extraction", "fact-extraction"},
		{" FACT__EXTRACTION ", "fact-extraction"},
		{"analytical_comparison", "analytical-comparison"},
		{"factextraction", ""},
		{"", ""},
		{"unknown_skill", ""},
	}
	for _, tt := range tests {
		s, ok := lib.Get(tt.query)
		got := ""
		if ok {
			got = s.Name
		}
		if got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestKey(t *testing.T) {
	tests := map[string]string{
		"a":          "a",
		"A_B":        "a-b",
		"a - b":      "a-b",
		"-a-":        "a",
		"__":         "",
		"gap\tanaly": "gap-analy",
	}
	for in, want := range tests {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}

func writeSkill(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAddDirOverridesBuiltins(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "fact-extraction", "---\nname: fact-extraction\ndescription: Custom facts.\n---\nCustom body.\n")
	writeSkill(t, dir, "legal-review", "---\nname: legal-review\ndescription: Review contracts.\n---\nReview.\n")
	writeSkill(t, dir, "broken", "no frontmatter\n")
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}

	lib := Builtins()
	ps, err := lib.AddDir(dir)
	if !errors.Is(err, ErrInvalidSkill) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("err = %v, want ErrInvalidSkill naming the broken skill", err)
	}
	if diff := cmp.Diff([]string{"warning file", "error frontmatter"}, fields(ps)); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, ps)
	}
	s, ok := lib.Get("fact_extraction")
	if !ok || s.BuiltIn || s.Body != "Custom body." || s.Source() != filepath.Join(dir, "fact-extraction", FileName) {
		t.Errorf("fact_extraction = %+v, want the custom skill", s)
	}
	if _, ok := lib.Get("legal_review"); !ok {
		t.Error("custom skill legal-review not added")
	}
	if got := len(lib.List()); got != len(builtinNames)+1 {
		t.Errorf("library has %d skills, want %d", got, len(builtinNames)+1)
	}
	// Other libraries are unaffected.
	if s, _ := Builtins().Get("fact-extraction"); !s.BuiltIn {
		t.Error("override leaked into a fresh built-in library")
	}

	// Adding a second custom skill of the same name is reported.
	dir2 := t.TempDir()
	writeSkill(t, dir2, "fact-extraction", "---\nname: fact-extraction\ndescription: Other.\n---\nOther.\n")
	ps, err = lib.AddDir(filepath.Join(dir2, "fact-extraction"))
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].Message, "replaces") {
		t.Errorf("got %v %v, want one replacement warning", ps, err)
	}
}

func TestLoadDirPaths(t *testing.T) {
	dir := t.TempDir()
	p := writeSkill(t, dir, "one", "---\nname: one\ndescription: d\n---\nbody\n")
	for _, in := range []string{p, filepath.Join(p, FileName)} {
		s, _, err := LoadDir(in)
		if err != nil || s.Name != "one" || s.Path != filepath.Join(p, FileName) {
			t.Errorf("LoadDir(%q) = %+v, %v", in, s, err)
		}
	}
	if _, _, err := LoadDir(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path: err = %v, want fs.ErrNotExist", err)
	}
	if _, _, err := LoadDir(dir); !errors.Is(err, ErrNoSkill) {
		t.Errorf("folder without SKILL.md: err = %v, want ErrNoSkill", err)
	}
	empty := t.TempDir()
	if _, err := Scan(empty); !errors.Is(err, ErrNoSkill) {
		t.Errorf("Scan of empty folder: err = %v, want ErrNoSkill", err)
	}
	big := writeSkill(t, dir, "big", "---\nname: big\ndescription: d\n---\n"+strings.Repeat("x", MaxFileSize))
	if _, ps, err := LoadDir(big); !errors.Is(err, ErrInvalidSkill) || len(ps) != 1 || ps[0].Field != "file" {
		t.Errorf("oversize file: %v %v", ps, err)
	}
}

func TestAddDirSeveralInvalidIsOneLine(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "a", "no frontmatter")
	writeSkill(t, dir, "b", "---\nname: b\n---\n")
	var lib Library // the zero value is usable
	_, err := lib.AddDir(dir)
	var ie *InvalidError
	if !errors.Is(err, ErrInvalidSkill) || !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q, want one line wrapping both invalid skills", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, "a")) || !strings.Contains(err.Error(), filepath.Join(dir, "b")) {
		t.Errorf("err %q does not name both skills", err)
	}
	if len(lib.List()) != 0 {
		t.Errorf("invalid skills were added: %v", lib.Names())
	}
}

func TestResolveAndCatalog(t *testing.T) {
	lib := Builtins()
	if s, found := lib.Resolve("Critique"); !found || s.Name != "critique" {
		t.Errorf("Resolve(Critique) = %v, %v", s.Name, found)
	}
	if s, found := lib.Resolve("poetry"); found || s.Name != Generic().Name {
		t.Errorf("Resolve(poetry) = %v, %v, want the generic skill", s.Name, found)
	}

	lib.Add(&Skill{Name: "multi", Description: "First line.\n  Second line."})
	lines := strings.Split(strings.TrimSuffix(lib.Catalog(), "\n"), "\n")
	if len(lines) != len(builtinNames)+1 {
		t.Fatalf("catalog has %d lines:\n%s", len(lines), lib.Catalog())
	}
	for i, s := range lib.List() {
		if !strings.HasPrefix(lines[i], "- "+s.Name+": ") {
			t.Errorf("line %d = %q, want skill %s", i, lines[i], s.Name)
		}
	}
	if !strings.Contains(lib.Catalog(), "- multi: First line. Second line.\n") {
		t.Errorf("multi-line description not folded:\n%s", lib.Catalog())
	}
}

// Suites keep skills at any depth (skills/<group>/<category>/<name>/SKILL.md);
// a scan finds all of them, skips .git, node_modules and hidden folders, and
// does not descend into a skill folder's own sub-folders.
func TestScanFindsSkillsAtAnyDepth(t *testing.T) {
	dir := t.TempDir()
	content := func(name string) string { return "---\nname: " + name + "\ndescription: d\n---\nbody\n" }
	want := []string{
		filepath.Join(dir, "a", "b", "deep", FileName),
		filepath.Join(dir, "a", "shallow", FileName),
		filepath.Join(dir, "x", "y", "z", "deeper", FileName),
	}
	for _, p := range want {
		writeSkill(t, filepath.Dir(filepath.Dir(p)), filepath.Base(filepath.Dir(p)), content(filepath.Base(filepath.Dir(p))))
	}
	// Not skills: inside a skill folder, in .git, node_modules or a dot folder.
	writeSkill(t, filepath.Join(dir, "a", "shallow", "references"), "inner", content("inner"))
	writeSkill(t, filepath.Join(dir, ".git", "x"), "g", content("g"))
	writeSkill(t, filepath.Join(dir, "a", "node_modules"), "n", content("n"))
	writeSkill(t, filepath.Join(dir, "x", ".cache"), "c", content("c"))
	if err := os.MkdirAll(filepath.Join(dir, "empty", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	results, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var warnings []Problem
	for _, r := range results {
		got = append(got, r.Path)
		if r.Err != nil {
			t.Errorf("%s: %v", r.Path, r.Err)
		}
		for _, p := range r.Problems {
			if p.Severity == Warning {
				warnings = append(warnings, p)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scanned skills (-want +got):\n%s", diff)
	}
	// The folder with no skill at any depth is reported, once.
	if len(warnings) != 1 || warnings[0].Path != filepath.Join(dir, "empty") {
		t.Errorf("warnings = %v, want one for %s", warnings, filepath.Join(dir, "empty"))
	}
}

// A symlinked folder is not walked: a link to a folder outside the tree
// (or to an ancestor, a loop) adds nothing, while a link to a skill folder
// loads that one skill, as baton always has for a folder of skill folders.
func TestScanDoesNotFollowSymlinkedFolders(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	content := func(name string) string { return "---\nname: " + name + "\ndescription: d\n---\nbody\n" }
	writeSkill(t, filepath.Join(dir, "group"), "real", content("real"))
	writeSkill(t, filepath.Join(outside, "tree", "deep"), "far", content("far"))
	writeSkill(t, outside, "linked", content("linked"))
	for link, target := range map[string]string{
		filepath.Join(dir, "group", "out"):    filepath.Join(outside, "tree"),
		filepath.Join(dir, "group", "loop"):   dir,
		filepath.Join(dir, "group", "linked"): filepath.Join(outside, "linked"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("cannot make a symlink here: %v", err)
		}
	}
	results, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		if r.Skill != nil {
			got = append(got, r.Skill.Name)
		}
	}
	if diff := cmp.Diff([]string{"linked", "real"}, got); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
}

// A scan pointed at a huge tree stops at its bound with a warning, keeping
// the skills found so far.
func TestScanIsBounded(t *testing.T) {
	defer func(n int) { maxScanEntries = n }(maxScanEntries)
	maxScanEntries = 10
	dir := t.TempDir()
	writeSkill(t, dir, "a-first", "---\nname: a-first\ndescription: d\n---\nbody\n")
	for i := range 20 {
		if err := os.MkdirAll(filepath.Join(dir, "z", fmt.Sprintf("f%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	results, err := Scan(dir)
	if err != nil || len(results) != 1 {
		t.Fatalf("Scan = %d results, %v", len(results), err)
	}
	var stopped bool
	for _, p := range results[0].Problems {
		stopped = stopped || strings.Contains(p.Message, "the scan stopped after 10 folder entries")
	}
	if !stopped {
		t.Errorf("no warning that the scan stopped: %v", results[0].Problems)
	}
}
