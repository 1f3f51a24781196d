package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "run.json")
	for _, content := range []string{"first", "second, longer content"} {
		if err := Write(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("content = %q, want %q", got, content)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file: %v", len(entries), entries)
	}
	info, _ := os.Stat(p)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", info.Mode().Perm())
	}
}

func TestWriteFailureKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keep.txt")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be renamed makes the rename fail.
	bad := filepath.Join(dir, "isdir")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(bad, []byte("new"), 0o644); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Fatalf("old file changed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".txt" && e.Name() != "isdir" {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteInConfined(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(outside, 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteIn(root, "sub/deep/f.txt", []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "sub/deep/f.txt", []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "sub", "deep", "f.txt"))
	if string(got) != "two" {
		t.Errorf("content = %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "sub", "deep", "f.txt")); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sub", "deep")); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "out/x", []byte("pwned"), 0o644); err == nil {
		t.Error("WriteIn through a symlink out of the root succeeded")
	}
	if err := WriteIn(root, "link", []byte("pwned"), 0o644); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteIn over a symlink = %v, want ErrSymlink", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the root: %v", entries)
	}
}
