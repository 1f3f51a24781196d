package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymlinkOutOfFolderRefused: a state.yaml that is a symlink leading out
// of its own folder is neither read nor written. Load used to read the
// outside file and Update to rewrite it in place, so the outside content
// ended up in a file a model can read. A link to a file in the same folder
// still works (TestSaveKeepsModeAndSymlink).
func TestSymlinkOutOfFolderRefused(t *testing.T) {
	base := t.TempDir()
	specs := filepath.Join(base, "ws", "specs")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{specs, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "state.yaml")
	const secretText = "secret: SECRET outside the workspace\n"
	if err := os.WriteFile(secret, []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{
		"absolute":         secret,
		"relative":         "../../outside/state.yaml",
		"dangling":         filepath.Join(outside, "missing.yaml"),
		"through a folder": "sub/../../../outside/state.yaml",
	}
	os.MkdirAll(filepath.Join(specs, "sub"), 0o755)
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(specs, "state.yaml")
			os.Remove(path)
			if err := os.Symlink(target, path); err != nil {
				t.Skip("symlinks unavailable:", err)
			}
			check := func(op string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s through a symlink out of the folder succeeded", op)
				}
				msg := err.Error()
				if want := "state " + path + " is a symlink leading out of its folder"; !strings.Contains(msg, want) {
					t.Errorf("%s error %q, want it to say %q", op, msg, want)
				}
				if strings.Contains(msg, "\n") || strings.Contains(msg, "SECRET") {
					t.Errorf("%s error %q spans lines or leaks the target", op, msg)
				}
			}
			_, err := Load(path)
			check("Load", err)
			called := false
			check("Update", Update(path, func(f *File) error {
				called = true
				return f.Set("x", "handoff", "next_skill")
			}))
			if called {
				t.Error("Update ran its edit on the outside content")
			}
			// A File loaded before the link was planted must not write
			// through it either.
			f, err := Parse([]byte("mine: 1\n"), path)
			if err != nil {
				t.Fatal(err)
			}
			check("Save", f.Save())
			if got, err := os.Readlink(path); err != nil || got != target {
				t.Errorf("the link changed: now %q, %v", got, err)
			}
			if got, _ := os.ReadFile(secret); string(got) != secretText {
				t.Errorf("the outside file changed to %q", got)
			}
			if _, err := os.Lstat(filepath.Join(outside, "missing.yaml")); err == nil {
				t.Error("a file was created outside through the dangling link")
			}
		})
	}
}
