package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/workflow"
)

func TestProtectedRules(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	skill := func(root, name string) {
		p := filepath.Join(root, name, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: d\n---\n\nbody\n"), 0o644)
	}
	skill(filepath.Join(dir, "skills"), "a")
	skill(filepath.Join(dir, "more", "skills"), "b")
	skill(outside, "c")
	skill(dir, "root-skill")
	tests := []struct {
		name, yaml   string
		deny, readOn []string
	}{
		{"defaults", "skills: [skills, more/skills, " + outside + "]\n",
			[]string{".baton", ".git", "w.yaml", "skills", "more/skills"},
			[]string{"specs/state.yaml", "specs/ledger.md", "capsule.md"}},
		{"protect and custom paths", "state: s/st.yaml\nledger: s/l.md\nskills: skills\nprotect: [\"secrets/**\", \"*.pem\", .git]\n",
			[]string{".baton", ".git", "w.yaml", "skills", "secrets/**", "*.pem"},
			[]string{"s/st.yaml", "s/l.md", "capsule.md"}},
		// Skills are found at any depth, so those under skills/ and
		// more/skills/ are skills of the root folder too.
		{"skills in the workspace root", "skills: [.]\n",
			[]string{".baton", ".git", "w.yaml", "skills/a", "more/skills/b", "root-skill"},
			[]string{"specs/state.yaml", "specs/ledger.md", "capsule.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: n\ncapsule: capsule.md\nphases: [{name: p, skill: a}]\n" + tt.yaml
			wf, err := workflow.Parse([]byte(src), filepath.Join(dir, "w.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			deny, ro := protectedRules(wf)
			if diff := cmp.Diff(tt.deny, deny); diff != "" {
				t.Errorf("deny (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.readOn, ro); diff != "" {
				t.Errorf("readOnly (-want +got):\n%s", diff)
			}
		})
	}
}
