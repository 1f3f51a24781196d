package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/skill"
)

func TestFilesToRead(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		wantErr    bool
	}{
		{"none", "# Skill\nDo things.\n", nil, false},
		{"plain", "x\n<files_to_read>\na.md\n\ndocs/*.md\n</files_to_read>\ny", []string{"a.md", "docs/*.md"}, false},
		{"bullets and prose", "<files_to_read>\n- `src/main.go` — the entry point\n* b.md -- notes\n+ c.md #why\n1. d.md\n12) e.md\n# a comment\n// another\n</files_to_read>",
			[]string{"src/main.go", "b.md", "c.md", "d.md", "e.md"}, false},
		{"quotes", "<files_to_read>\n\"with space.md\"\n'x.md' (optional)\n</files_to_read>", []string{"with space.md", "x.md"}, false},
		{"one line and case", "<FILES_TO_READ>a.md</Files_To_Read>", []string{"a.md"}, false},
		{"two blocks dedup", "<files_to_read>\na\nb\n</files_to_read>\ntext\n<files_to_read>\nb\nc\n</files_to_read>", []string{"a", "b", "c"}, false},
		{"crlf", "<files_to_read>\r\na.md\r\n</files_to_read>", []string{"a.md"}, false},
		{"fence lines ignored", "<files_to_read>\n```\na.md\n```\n</files_to_read>", []string{"a.md"}, false},
		{"unclosed", "<files_to_read>\na.md\n", nil, true},
		{"close without open", "a\n</files_to_read>\n", nil, true},
		{"nested open", "<files_to_read>\n<files_to_read>\n</files_to_read>", nil, true},
		{"stray close before open", "</files_to_read><files_to_read>a</files_to_read>", nil, true},
		{"prose mention", "Declare inputs in a `<files_to_read>` block.\n", nil, false},
		{"indented tags", "  <files_to_read>\n  a.md\n  </files_to_read>\n", []string{"a.md"}, false},
		{"content after open tag", "<files_to_read> a.md\nb.md </files_to_read>", []string{"a.md", "b.md"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FilesToRead(tt.body)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrFilesToRead) {
				t.Errorf("error %v does not wrap ErrFilesToRead", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var many strings.Builder
	many.WriteString("<files_to_read>\n")
	for i := 0; i <= maxPatterns; i++ {
		many.WriteString(strings.Repeat("x", i+1) + "\n")
	}
	many.WriteString("</files_to_read>")
	if _, err := FilesToRead(many.String()); !errors.Is(err, ErrFilesToRead) {
		t.Errorf("FilesToRead(%d entries) = %v, want ErrFilesToRead", maxPatterns+1, err)
	}
}

func FuzzFilesToRead(f *testing.F) {
	for _, s := range []string{"<files_to_read>\n- `a` — b\n</files_to_read>", "<files_to_read>", "</files_to_read>", "<FILES_TO_READ>x</files_to_read><files_to_read>y</files_to_read>", "<files_to_read>\n1) \n- \n'\n</files_to_read>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := FilesToRead(body)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || seen[p] || strings.Contains(p, "\n") {
				t.Errorf("bad pattern %q in %q", p, got)
			}
			seen[p] = true
		}
	})
}

// workspaceWith writes files (relative path → content) into a new
// workspace beside an outside folder holding a secret.
func workspaceWith(t *testing.T, files map[string]string) (*workspace.Workspace, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("TOP SECRET\n"), 0o644)
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(root, 0o755)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func TestStepContext(t *testing.T) {
	ws, outside := workspaceWith(t, map[string]string{
		"capsule.md":       "# Capsule\nGoal: X.\n",
		"specs/state.yaml": "handoff:\n  next_skill: b\n",
		"docs/a.md":        "alpha\n",
		"docs/b.md":        "beta", // no final newline
		"bin.dat":          "\x00\x01",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws.Root(), "leak.md")); err != nil {
		t.Skip(err)
	}
	sk := &skill.Skill{Name: "demo", Body: "# Demo\n<files_to_read>\n- docs/*.md\n- capsule.md\n- missing.md\n- ../outside/secret.md\n- leak.md\n- bin.dat\n- nothing/*.md\n</files_to_read>\n"}
	c, err := StepContext(ws, sk, "capsule.md", "specs/state.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	wantUser := `This is the whole input of your step: the work capsule, the current state, the files your skill declares. Nothing from earlier steps is included beyond what they record here.

<capsule path="capsule.md">
# Capsule
Goal: X.
</capsule>

<state path="specs/state.yaml">
handoff:
  next_skill: b
</state>

<file path="docs/a.md">
alpha
</file>

<file path="docs/b.md">
beta
</file>

<unavailable_files>
- missing.md: not found
- ../outside/secret.md: refused: outside the workspace
- leak.md: refused: outside the workspace
- bin.dat: skipped: not a text file
- nothing/*.md: no file matches
</unavailable_files>
`
	if diff := cmp.Diff(wantUser, c.User); diff != "" {
		t.Errorf("User (-want +got):\n%s", diff)
	}
	if c.System != sk.Body {
		t.Errorf("System = %q, want the skill body", c.System)
	}
	if strings.Contains(c.User, "TOP SECRET") {
		t.Error("the outside file reached the context")
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Role+":"+f.Path)
		if !f.Missing && f.Tokens == 0 {
			t.Errorf("%s has no token count", f.Path)
		}
	}
	wantPaths := []string{"capsule:capsule.md", "state:specs/state.yaml", "file:docs/a.md", "file:docs/b.md",
		"file:missing.md", "file:../outside/secret.md", "file:leak.md", "file:bin.dat", "file:nothing/*.md"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if len(c.Missing()) != 5 {
		t.Errorf("Missing() = %d entries, want 5", len(c.Missing()))
	}
	if c.Tokens <= 0 {
		t.Errorf("Tokens = %d", c.Tokens)
	}

	// Deterministic: the same inputs give the same hash; any change moves it.
	again, _ := StepContext(ws, sk, "capsule.md", "specs/state.yaml", "")
	if again.Hash() != c.Hash() || len(c.Hash()) != 64 {
		t.Errorf("hash not stable: %s vs %s", c.Hash(), again.Hash())
	}
	seeded, err := StepContext(ws, sk, "capsule.md", "specs/state.yaml", "## Ledger — one — 2026-01-01T00:00:00Z\n- Frozen decisions: none\n")
	if err != nil {
		t.Fatal(err)
	}
	if seeded.Hash() == c.Hash() {
		t.Error("a ledger entry did not change the hash")
	}
	if !strings.HasSuffix(seeded.User, "<ledger_entry>\n## Ledger — one — 2026-01-01T00:00:00Z\n- Frozen decisions: none\n</ledger_entry>\n") {
		t.Errorf("ledger entry not at the end:\n%s", seeded.User)
	}
	if last := seeded.Files[len(seeded.Files)-1]; last.Role != RoleLedger || last.Tokens == 0 {
		t.Errorf("last file = %+v, want the ledger entry", last)
	}
}

func TestStepContextStateAndCapsule(t *testing.T) {
	ws, _ := workspaceWith(t, map[string]string{"capsule.md": "c\n"})
	sk := &skill.Skill{Name: "s", Body: "body"}
	c, err := StepContext(ws, sk, "capsule.md", "specs/state.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.User, "(no state yet: this is the first step)") || !c.Files[1].Missing {
		t.Errorf("missing state not reported:\n%s\n%+v", c.User, c.Files)
	}
	if _, err := StepContext(ws, sk, "nope.md", "", ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing capsule: err = %v, want ErrNotExist", err)
	}
	if _, err := StepContext(ws, sk, "../capsule.md", "", ""); !errors.Is(err, workspace.ErrOutsideWorkspace) {
		t.Errorf("escaping capsule: err = %v", err)
	}
	bad := &skill.Skill{Name: "bad", Body: "<files_to_read>\na\n"}
	if _, err := StepContext(ws, bad, "capsule.md", "", ""); !errors.Is(err, ErrFilesToRead) {
		t.Errorf("unclosed block: err = %v", err)
	}
	c, err = StepContext(ws, sk, "", "", "")
	if err != nil || len(c.Files) != 0 {
		t.Errorf("no capsule, no state: %v, %+v", err, c)
	}
}

func TestStepContextOversizedFile(t *testing.T) {
	ws, _ := workspaceWith(t, map[string]string{
		"capsule.md": "c\n",
		"big.txt":    strings.Repeat("x", MaxInputFileBytes+1),
	})
	sk := &skill.Skill{Name: "s", Body: "<files_to_read>\nbig.txt\n</files_to_read>"}
	c, err := StepContext(ws, sk, "capsule.md", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.User, "- big.txt: skipped: too large\n") || strings.Contains(c.User, "xxxx") {
		t.Errorf("oversized file not reported as skipped:\n%.300s", c.User)
	}
}
