package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/mcpserver"
)

// spillRoot is a root holding big.md, whose whole slice is over a result
// bound of MinResultBytes, and a spill folder holding files aged as given
// (hours).
func spillRoot(t *testing.T, aged map[string]int) (root, spillDir string) {
	t.Helper()
	root = t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 4*mcpserver.MinResultBytes; i++ {
		fmt.Fprintf(&b, "Line %d of the big document.\n", i+1)
	}
	writeTree(t, root, map[string]string{"big.md": b.String()})
	spillDir = filepath.Join(root, filepath.FromSlash(mcpserver.SpillDir))
	if err := os.MkdirAll(spillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, hours := range aged {
		p := filepath.Join(spillDir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("s", 1000)), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-time.Duration(hours) * time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return root, spillDir
}

// spillBig slices the whole of big.md, which is spilled, and returns the
// spill file's name.
func spillBig(t *testing.T, cfg mcpserver.Config) string {
	t.Helper()
	cfg.MaxResultBytes = mcpserver.MinResultBytes
	_, cs := serveCounted(t, cfg)
	var out mcpserver.SliceOut
	res := call(t, cs, "slice", map[string]any{"document": "big.md", "line_ranges": [][2]int{{1, 1 << 20}}}, &out)
	if res.IsError || out.Spilled == nil {
		t.Fatalf("slice of big.md: isError %v (%s), spilled %+v", res.IsError, resultText(res), out.Spilled)
	}
	return filepath.Base(out.Spilled.Path)
}

func spillNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A new spill removes spill files older than DefaultSpillMaxAge; fresher
// ones, files that are not spills and a symlink named like a spill stay,
// and what the symlink points at is untouched.
func TestSpillFolderIsPrunedByAge(t *testing.T) {
	root, dir := spillRoot(t, map[string]int{
		"slice-aaaaaaaaaaaa.md":          48,
		"count_tokens-bbbbbbbbbbbb.json": 25,
		"outline-cccccccccccc.md":        2,
		"notes.txt":                      100,
	})
	writeTree(t, root, map[string]string{"precious.md": "keep me"})
	if err := os.Symlink("../../precious.md", filepath.Join(dir, "ask-dddddddddddd.md")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	os.Chtimes(filepath.Join(root, "precious.md"), old, old)
	name := spillBig(t, mcpserver.Config{Root: root})
	want := []string{"ask-dddddddddddd.md", "notes.txt", "outline-cccccccccccc.md", name}
	slices.Sort(want)
	if got := spillNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("the spill folder holds %v, want %v", got, want)
	}
	if data, err := os.ReadFile(filepath.Join(root, "precious.md")); err != nil || string(data) != "keep me" {
		t.Errorf("the symlink's target: %q, %v", data, err)
	}
}

// A new spill removes the oldest spill files until the folder is within
// SpillMaxFiles and SpillMaxBytes, never the file just written, which
// stays even when it alone is over SpillMaxBytes.
func TestSpillFolderIsPrunedBySize(t *testing.T) {
	aged := map[string]int{}
	for i := range 5 {
		aged[fmt.Sprintf("slice-%012x.md", i)] = i + 1 // slice-0 is the newest
	}
	root, dir := spillRoot(t, aged)
	name := spillBig(t, mcpserver.Config{Root: root, SpillMaxFiles: 3})
	want := []string{"slice-000000000000.md", "slice-000000000001.md", name}
	slices.Sort(want)
	if got := spillNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("with at most 3 files: %v, want %v", got, want)
	}
	name = spillBig(t, mcpserver.Config{Root: root, SpillMaxBytes: 2500})
	if got := spillNames(t, dir); !slices.Equal(got, []string{name}) {
		t.Errorf("with at most 2500 bytes, a spill over them alone: %v, want only %s", got, name)
	}
}

// A spill folder that is a symlink is neither written through nor pruned:
// the spill is refused with one line and the folder it points at is as it
// was.
func TestSpillFolderSymlinkIsRefused(t *testing.T) {
	root, _ := spillRoot(t, nil)
	if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(mcpserver.SpillDir))); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "docs")
	writeTree(t, root, map[string]string{"docs/slice-aaaaaaaaaaaa.md": "mine"})
	old := time.Now().Add(-72 * time.Hour)
	os.Chtimes(filepath.Join(other, "slice-aaaaaaaaaaaa.md"), old, old)
	if err := os.Symlink("../docs", filepath.Join(root, filepath.FromSlash(mcpserver.SpillDir))); err != nil {
		t.Fatal(err)
	}
	_, cs := serveCounted(t, mcpserver.Config{Root: root, MaxResultBytes: mcpserver.MinResultBytes})
	res := call(t, cs, "slice", map[string]any{"document": "big.md", "line_ranges": [][2]int{{1, 1 << 20}}}, nil)
	if msg := resultText(res); !res.IsError || strings.Contains(msg, "\n") || !strings.Contains(msg, "symlink") {
		t.Errorf("a spill through a symlinked folder: isError %v, %q", res.IsError, msg)
	}
	if got := spillNames(t, other); !slices.Equal(got, []string{"slice-aaaaaaaaaaaa.md"}) {
		t.Errorf("the symlinked folder holds %v", got)
	}
}
