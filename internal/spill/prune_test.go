package spill_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/spill"
)

// pruneDir is a folder of spill files, each aged as given (hours) and of
// the given size, with the root opened on it.
func pruneDir(t *testing.T, files map[string][2]int, now time.Time) (string, *os.Root) {
	t.Helper()
	dir := t.TempDir()
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", f[1])), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-time.Duration(f[0]) * time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, root
}

func left(t *testing.T, dir string) []string {
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

func isSpill(name string) bool { return strings.HasPrefix(name, "s-") }

// Files older than the age go first; then the oldest, until the rest are
// within the bytes and the count; the file just written stays even when
// it is the oldest or alone over the bytes; files that are not spills are
// not counted or touched.
func TestPrune(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	base := map[string][2]int{ // name: hours old, bytes
		"s-a": {48, 10}, "s-b": {30, 10}, "s-c": {5, 10}, "s-d": {3, 10}, "s-e": {1, 10},
		"notes.md": {100, 1000},
	}
	cases := []struct {
		name string
		keep string
		lim  spill.Limits
		want []string
	}{
		{"age", "s-e", spill.Limits{MaxAge: 24 * time.Hour}, []string{"notes.md", "s-c", "s-d", "s-e"}},
		{"bytes", "s-e", spill.Limits{MaxBytes: 25}, []string{"notes.md", "s-d", "s-e"}},
		{"files", "s-e", spill.Limits{MaxFiles: 3}, []string{"notes.md", "s-c", "s-d", "s-e"}},
		{"all three", "s-e", spill.Limits{MaxAge: 24 * time.Hour, MaxBytes: 1 << 20, MaxFiles: 2}, []string{"notes.md", "s-d", "s-e"}},
		{"kept though oldest", "s-a", spill.Limits{MaxAge: 24 * time.Hour, MaxFiles: 1}, []string{"notes.md", "s-a"}},
		{"kept alone over the bytes", "s-e", spill.Limits{MaxBytes: 5}, []string{"notes.md", "s-e"}},
		{"no limits", "s-e", spill.Limits{}, []string{"notes.md", "s-a", "s-b", "s-c", "s-d", "s-e"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, root := pruneDir(t, base, now)
			p, err := spill.Prune(root, c.keep, c.lim, now, isSpill)
			if err != nil {
				t.Fatal(err)
			}
			got := left(t, dir)
			if !slices.Equal(got, c.want) {
				t.Errorf("left %v, want %v", got, c.want)
			}
			if p.Left != len(c.want)-1 || p.Removed != 5-p.Left || p.LeftBytes != int64(10*p.Left) {
				t.Errorf("pruned %+v for %d spill files left", p, len(c.want)-1)
			}
		})
	}
}

// A symlink named like a spill file is neither followed nor removed, and
// what it points at is untouched; a subfolder is not entered.
func TestPruneFollowsNoSymlink(t *testing.T) {
	now := time.Now()
	outside := filepath.Join(t.TempDir(), "s-target")
	if err := os.WriteFile(outside, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-72 * time.Hour)
	os.Chtimes(outside, old, old)
	dir, root := pruneDir(t, map[string][2]int{"s-new": {0, 10}}, now)
	if err := os.Symlink(outside, filepath.Join(dir, "s-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "s-sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "s-sub", "s-old"), []byte("x"), 0o644)
	os.Chtimes(filepath.Join(dir, "s-sub", "s-old"), old, old)
	if _, err := spill.Prune(root, "s-new", spill.Limits{MaxAge: time.Hour, MaxBytes: 1, MaxFiles: 1}, now, isSpill); err != nil {
		t.Fatal(err)
	}
	if got := left(t, dir); !slices.Equal(got, []string{"s-link", "s-new", "s-sub"}) {
		t.Errorf("left %v", got)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "precious" {
		t.Errorf("the symlink's target: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s-sub", "s-old")); err != nil {
		t.Errorf("a file in a subfolder: %v", err)
	}
}

// A folder of many spill files is pruned to its count in one pass.
func TestPruneMany(t *testing.T) {
	now := time.Now()
	files := map[string][2]int{}
	for i := range 600 {
		files[fmt.Sprintf("s-%03d", i)] = [2]int{600 - i, 1}
	}
	dir, root := pruneDir(t, files, now)
	p, err := spill.Prune(root, "s-000", spill.Limits{MaxFiles: 100}, now, isSpill)
	if err != nil || p.Left != 100 || p.Removed != 500 {
		t.Fatalf("pruned %+v, %v", p, err)
	}
	got := left(t, dir)
	// The oldest, s-000, is kept; the newest 99 are the rest.
	if len(got) != 100 || got[0] != "s-000" || got[1] != "s-501" {
		t.Errorf("left %d files from %v", len(got), got[:2])
	}
}
