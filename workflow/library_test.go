package workflow

import (
	"os"
	"path/filepath"
	"testing"
)

// A workflow's skills: folder may hold its skills several folders down, as
// suites arrange them; every one is in the library.
func TestLibraryFindsNestedSkills(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"skills/eng/review/api-review", "skills/eng/frontend/a11y/contrast-check", "skills/ops/runbook"} {
		name := filepath.Base(p)
		full := filepath.Join(dir, filepath.FromSlash(p), "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("---\nname: "+name+"\ndescription: d\n---\nbody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := Parse([]byte("name: n\ncapsule: capsule.md\nskills: [skills]\nphases: [{name: p, skill: contrast-check}]\n"), filepath.Join(dir, "baton.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lib, _, err := w.Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"api-review", "contrast-check", "runbook"} {
		if s, ok := lib.Get(name); !ok || s.BuiltIn {
			t.Errorf("skill %s not in the library", name)
		}
	}
	if err := w.Validate(lib); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
