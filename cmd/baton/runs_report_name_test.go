package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// An imported record whose id is a path (../../../x) gets its report
// written in the current folder under a sanitised name; nothing is written
// above it.
func TestRunsReportOfAnImportedIDStaysInTheFolder(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	root := t.TempDir()
	id := askIn(t, filepath.Join(root, "made"))
	data, err := os.ReadFile(filepath.Join(root, "made", ".baton", "runs", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["id"] = "../../../x"
	crafted, _ := json.Marshal(rec)
	imported := filepath.Join(root, "imported")
	os.MkdirAll(imported, 0o755)
	if err := os.WriteFile(filepath.Join(imported, "x.json"), crafted, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BATON_HOME", t.TempDir())
	if code, out, errOut := runBaton(t, "", "runs", "import", imported); code != exitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	cwd := filepath.Join(root, "a", "b", "c", "here")
	os.MkdirAll(cwd, 0o755)
	t.Chdir(cwd)
	code, out, errOut := runBaton(t, "", "runs", "report", "../../../x")
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	name := strings.TrimSpace(out)
	if filepath.Dir(name) != "." || strings.Contains(name, "..") || strings.ContainsAny(name, `/\`) {
		t.Errorf("the report went to %q, want a plain name in the current folder", name)
	}
	if _, err := os.Stat(filepath.Join(cwd, name)); err != nil {
		t.Errorf("the report is not in the current folder: %v", err)
	}
	for _, dir := range []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b"), filepath.Join(root, "a", "b", "c")} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".html") {
				t.Errorf("a report was written above the current folder: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}
