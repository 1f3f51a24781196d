package document

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/slice"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSingleFileIsUsedUnchanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.md")
	content := "# Title\n\n## Part\ntext\n"
	write(t, p, content)
	c, err := Load([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != content || c.Parts != nil || len(c.Sources) != 1 {
		t.Fatalf("context = %+v", c)
	}
}

func TestFolderAndStdinBecomeSectionsNamedByPath(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.md"), "# Beta\nbeta text\n")
	write(t, filepath.Join(dir, "a.txt"), "alpha notes\n")
	write(t, filepath.Join(dir, "sub", "c.markdown"), "Gamma\n=====\ngamma text\n")
	write(t, filepath.Join(dir, "logo.png"), "\x89PNG\x00")
	write(t, filepath.Join(dir, ".hidden", "x.md"), "# Hidden\n")
	write(t, filepath.Join(dir, "node_modules", "y.md"), "# Vendored\n")

	c, err := Load([]string{dir, "-"}, strings.NewReader("# From stdin\nstdin text\n"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Sources {
		names = append(names, strings.TrimPrefix(s.Name, filepath.ToSlash(dir)+"/"))
	}
	want := []string{"a.txt", "b.md", "sub/c.markdown", "-"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("sources = %v, want %v", names, want)
	}
	// Each source is a top-level section; its own headings sit below it.
	doc := slice.Parse([]byte(c.Text))
	var top, nested []string
	for _, h := range doc.Outline() {
		if h.Level == 1 {
			top = append(top, h.Title)
		} else {
			nested = append(nested, h.Title)
		}
	}
	if len(top) != 4 || !strings.HasSuffix(top[2], "sub/c.markdown") || top[3] != "-" {
		t.Fatalf("top-level sections = %v", top)
	}
	if strings.Join(nested, ",") != "Beta,Gamma,From stdin" {
		t.Fatalf("nested sections = %v", nested)
	}
	r := doc.Extract(slice.Pointers{Sections: []string{"Gamma"}})
	if r.Fallback || !strings.Contains(r.Text, "gamma text") || strings.Contains(r.Text, "beta text") {
		t.Fatalf("slice of a combined document = %+v", r)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "blob.md")
	write(t, bin, "abc\x00def")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.md")}, "missing.md: no such file"},
		{[]string{bin}, "looks binary"},
		{[]string{empty}, "holds no markdown or text files"},
		{[]string{"-", "-"}, "more than once"},
	}
	for _, tc := range cases {
		_, err := Load(tc.args, strings.NewReader("x"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v) = %v, want an error containing %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is more than one line: %q", err)
		}
	}
	if _, err := Load(nil, nil); !errors.Is(err, ErrNoInput) {
		t.Errorf("Load(nil) = %v, want ErrNoInput", err)
	}
}
