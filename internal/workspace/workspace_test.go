package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// setup builds a workspace beside an "outside" directory holding a secret,
// with symlinks of every escaping kind planted inside the workspace.
func setup(t *testing.T) (ws *Workspace, outside string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "docs", "deep"), filepath.Join(root, ".git"), filepath.Join(root, ".hidden")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):        "secret\n",
		filepath.Join(root, "a.md"):                 "# A\nhello world\n",
		filepath.Join(root, "docs", "b.md"):         "beta\nHello again\n",
		filepath.Join(root, "docs", "deep", "c.go"): "package c\n// hello\n",
		filepath.Join(root, ".git", "config"):       "hello git\n",
		filepath.Join(root, ".hidden", "h.md"):      "hello hidden\n",
		filepath.Join(root, "bin.dat"):              "hello\x00\x01\x02",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-out-file":  filepath.Join(outside, "secret.txt"),
		"link-out-dir":   outside,
		"link-out-rel":   "../outside/secret.txt",
		"link-dangling":  filepath.Join(outside, "new.txt"),
		"chain1":         "chain2",
		"chain2":         "link-out-file",
		"link-in":        "a.md",
		"link-in-dir":    "docs",
		"link-in-abs":    filepath.Join(root, "docs", "b.md"),
		"loop1":          "loop2",
		"loop2":          "loop1",
		"docs/up":        "..",
		"docs/up-up":     "../..",
		"docs/deep/back": "../../a.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return writable(t, w), outside
}

// everything declares every path writable, so that a test sees what the
// other rules refuse.
var everything = []string{"**"}

// writable is w with every path declared writable.
func writable(t *testing.T, w *Workspace) *Workspace {
	t.Helper()
	out, err := w.Restrict(Rules{Write: everything})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := New(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("New(file) = %v, want a not-a-directory error", err)
	}
	if _, err := New(filepath.Join(dir, "missing")); err == nil {
		t.Error("New(missing) succeeded")
	}
	// A root reached through a symlink compares paths by its real location.
	link := filepath.Join(t.TempDir(), "rootlink")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	w, err := New(link)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if w.Root() != real {
		t.Errorf("Root() = %q, want %q", w.Root(), real)
	}
	if _, err := w.Resolve("f"); err != nil {
		t.Errorf("Resolve through a symlinked root: %v", err)
	}
}

func TestResolveRefuses(t *testing.T) {
	w, outside := setup(t)
	tests := []struct {
		rel     string
		outside bool // the error must wrap ErrOutsideWorkspace
	}{
		{"../x", true},
		{"..", true},
		{"a/../../x", true},
		{"docs/../../outside/secret.txt", true},
		{"/etc/passwd", true},
		{filepath.Join(outside, "secret.txt"), true},
		{"link-out-file", true},
		{"link-out-dir/secret.txt", true},
		{"link-out-dir", true},
		{"link-out-rel", true},
		{"link-dangling", true},
		{"chain1", true},
		{"docs/up-up/outside/secret.txt", true},
		{"docs/up/link-out-dir/new.txt", true},
		{"", false},
		{"a\x00b", false},
		{"loop1", false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			p, err := w.Resolve(tt.rel)
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.rel, p)
			}
			if got := errors.Is(err, ErrOutsideWorkspace); got != tt.outside {
				t.Errorf("errors.Is(%v, ErrOutsideWorkspace) = %v, want %v", err, got, tt.outside)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if tt.rel != "" && !strings.Contains(err.Error(), strings.ReplaceAll(tt.rel, "\x00", `\x00`)) {
				t.Errorf("error %q does not name the path as given", err)
			}
		})
	}
}

func TestResolveAccepts(t *testing.T) {
	w, _ := setup(t)
	root := w.Root()
	tests := []struct{ rel, want string }{
		{".", root},
		{"a.md", filepath.Join(root, "a.md")},
		{"./docs//b.md", filepath.Join(root, "docs", "b.md")},
		{"docs/../a.md", filepath.Join(root, "a.md")},
		{"link-in", filepath.Join(root, "a.md")},
		{"link-in-dir/b.md", filepath.Join(root, "docs", "b.md")},
		{"link-in-abs", filepath.Join(root, "docs", "b.md")},
		{"docs/up/a.md", filepath.Join(root, "a.md")},
		{"docs/deep/back", filepath.Join(root, "a.md")},
		{"new/dir/file.txt", filepath.Join(root, "new", "dir", "file.txt")},
		{"a.md/child", filepath.Join(root, "a.md", "child")},
	}
	for _, tt := range tests {
		got, err := w.Resolve(tt.rel)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.rel, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.rel, got, tt.want)
		}
	}
}

func TestToolsStayInside(t *testing.T) {
	w, outside := setup(t)
	secret := filepath.Join(outside, "secret.txt")
	escapes := []string{"../outside/secret.txt", "a/../../outside/secret.txt", secret, "link-out-file",
		"link-out-dir/secret.txt", "link-out-rel", "chain1", "link-dangling", "link-out-dir/new.txt"}
	for _, rel := range escapes {
		if _, err := w.ReadFile(rel, 0); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("ReadFile(%q) = %v, want ErrOutsideWorkspace", rel, err)
		}
		if err := w.WriteFile(rel, []byte("pwned")); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("WriteFile(%q) = %v, want ErrOutsideWorkspace", rel, err)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "secret\n" {
		t.Errorf("outside file changed to %q", got)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside directory holds %d entries, want only secret.txt", len(entries))
	}
	for _, pat := range []string{"../**", "/etc/*", "../outside/*"} {
		if _, err := w.List(pat); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("List(%q) = %v, want ErrOutsideWorkspace", pat, err)
		}
	}
	if hits, err := w.Search("secret", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("Search(secret) = %v, %v; want no hits through outside symlinks", hits, err)
	}
}

func TestReadFile(t *testing.T) {
	w, _ := setup(t)
	os.WriteFile(filepath.Join(w.Root(), "latin1.txt"), []byte("caf\xe9\n"), 0o644)
	tests := []struct {
		rel     string
		max     int
		want    string
		wantErr error
		errText string
	}{
		{rel: "a.md", want: "# A\nhello world\n"},
		{rel: "link-in", want: "# A\nhello world\n"},
		{rel: "a.md", max: 5, wantErr: ErrTooLarge, errText: "16 bytes, the limit is 5"},
		{rel: "bin.dat", wantErr: ErrBinary},
		{rel: "latin1.txt", wantErr: ErrBinary},
		{rel: "missing.md", wantErr: os.ErrNotExist, errText: "read missing.md: "},
		{rel: "docs", errText: "is a directory"},
	}
	for _, tt := range tests {
		got, err := w.ReadFile(tt.rel, tt.max)
		if tt.wantErr == nil && tt.errText == "" {
			if err != nil || got != tt.want {
				t.Errorf("ReadFile(%q) = %q, %v; want %q", tt.rel, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ReadFile(%q) succeeded, want an error", tt.rel)
			continue
		}
		if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("ReadFile(%q) = %v, want %v", tt.rel, err, tt.wantErr)
		}
		if !strings.Contains(err.Error(), tt.errText) || strings.Contains(err.Error(), w.Root()) {
			t.Errorf("ReadFile(%q) error %q: want it to contain %q and not the absolute root", tt.rel, err, tt.errText)
		}
	}
}

func TestIsText(t *testing.T) {
	long := strings.Repeat("a", sniffLen-1) + "é" // the cut falls inside é
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{"plain\n", true},
		{"naïve ✓\n", true},
		{"nul\x00", false},
		{"\xff\xfe", false},
		{long, true},
	}
	for _, tt := range tests {
		if got := isText([]byte(tt.in)); got != tt.want {
			t.Errorf("isText(%.20q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	w, _ := setup(t)
	if err := w.WriteFile("out/sub/new.md", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(w.Root(), "out", "sub", "new.md")); string(got) != "one" {
		t.Errorf("got %q", got)
	}
	// A symlink inside the workspace is not written through, onto or past.
	for _, p := range []string{"link-in", "link-in-abs", "link-in-dir/new.md", "docs/deep/back"} {
		if err := w.WriteFile(p, []byte("two")); !errors.Is(err, ErrSymlink) || !errors.Is(err, ErrProtected) {
			t.Errorf("WriteFile(%q) = %v, want ErrSymlink", p, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(w.Root(), "a.md")); string(got) != "# A\nhello world\n" {
		t.Errorf("a.md = %q: written through a symlink", got)
	}
	if _, err := os.Stat(filepath.Join(w.Root(), "docs", "new.md")); err == nil {
		t.Error("docs/new.md was written through link-in-dir")
	}
	for _, tt := range []struct{ rel, want string }{
		{"docs", "write docs: is a directory"},
		{".", "write .: is the workspace root"},
		{"a.md/child", "write a.md/child: not a directory"},
	} {
		err := w.WriteFile(tt.rel, []byte("x"))
		if err == nil || err.Error() != tt.want {
			t.Errorf("WriteFile(%q) = %v, want %q", tt.rel, err, tt.want)
		}
	}
}

func TestList(t *testing.T) {
	w, _ := setup(t)
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*.md", []string{"a.md"}},
		// Symlinked folders are not descended into: that is how loops such
		// as docs/up are survived.
		{"**/*.md", []string{"a.md", "docs/b.md"}},
		{"docs/**", []string{"docs/b.md", "docs/deep/back", "docs/deep/c.go"}},
		{"docs/*/*.go", []string{"docs/deep/c.go"}},
		{"docs/b.md", []string{"docs/b.md"}},
		{"./docs//*.md", []string{"docs/b.md"}},
		{"docs/../*.md", []string{"a.md"}},
		{"link-in-dir/*.md", []string{"link-in-dir/b.md"}},
		{".hidden/*.md", []string{".hidden/h.md"}},
		{"**/config", nil},
		{"nothing/**", nil},
	}
	for _, tt := range tests {
		got, err := w.List(tt.pattern)
		if err != nil {
			t.Errorf("List(%q): %v", tt.pattern, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("List(%q) (-want +got):\n%s", tt.pattern, diff)
		}
	}
	all, err := w.List("")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if strings.HasPrefix(p, ".") || strings.Contains(p, "/.") || strings.HasPrefix(p, "link-out") || strings.HasPrefix(p, "chain") {
			t.Errorf("List(\"\") includes %q", p)
		}
	}
	if _, err := w.List("[bad"); err == nil {
		t.Error("List([bad) succeeded")
	}
}

func TestListBounded(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < MaxListEntries+5; i++ {
		os.WriteFile(filepath.Join(dir, strings.Repeat("f", 1)+string(rune('a'+i%26))+strings.Repeat("x", i/26)), nil, 0o644)
	}
	w, _ := New(dir)
	got, err := w.List("*")
	if !errors.Is(err, ErrTruncated) || len(got) != MaxListEntries {
		t.Errorf("List = %d paths, %v; want %d and ErrTruncated", len(got), err, MaxListEntries)
	}
}

// The matcher is doublestar's; these pin down what baton relies on,
// including a pattern with many "**" that a naive backtracking matcher
// would take exponential time over.
func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**/*.go", "x.go", true},
		{"**/*.go", "a/b/x.go", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"*.go", "a/x.go", false},
		{"a/*/c", "a/b/c", true},
		{"**/**/x", "x", true},
		{"**", "", true},
		{"a", "", false},
		{"a/**", "a", true},
		{"**/a/**/a/**/a/**/a/**/b", strings.Repeat("a/", 60) + "c", false},
		{"**/*.{py,md}", "x/y/z.md", true},
		{"**/*.{py,md}", "z.py", true},
		{"**/*.{py,md}", "z.go", false},
		{"{a/b,c}/*.go", "a/b/x.go", true},
		{"{a/b,c}/*.go", "c/x.go", true},
		{"{a/b,c}/*.go", "a/x.go", false},
		{"src/{x,y/{z,w}}/f", "src/y/w/f", true},
		{"*.MD", "a.md", false}, // case matters, as on the file systems that hold most workspaces
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pat)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.pat, err)
			continue
		}
		if got := g.match(tt.name); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pat, tt.name, got, tt.want)
		}
	}
}

func TestSearch(t *testing.T) {
	w, _ := setup(t)
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
		want  []Hit
	}{
		{"substring", "hello", SearchOptions{}, []Hit{{"a.md", 2, "hello world"}, {"docs/deep/back", 2, "hello world"}, {"docs/deep/c.go", 2, "// hello"}, {"link-in", 2, "hello world"}}},
		{"ignore case", "HELLO", SearchOptions{IgnoreCase: true, Glob: "docs/**"}, []Hit{{"docs/b.md", 2, "Hello again"}, {"docs/deep/back", 2, "hello world"}, {"docs/deep/c.go", 2, "// hello"}}},
		{"regexp", `^b.t`, SearchOptions{Regexp: true}, []Hit{{"docs/b.md", 1, "beta"}, {"link-in-abs", 1, "beta"}}},
		{"too big skipped", "hello", SearchOptions{MaxFileBytes: 5}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Search(tt.query, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	got, err := w.Search("hello", SearchOptions{MaxHits: 1})
	if !errors.Is(err, ErrTruncated) || len(got) != 1 {
		t.Errorf("bounded search = %v, %v", got, err)
	}
	for _, q := range []string{"", "("} {
		if _, err := w.Search(q, SearchOptions{Regexp: true}); err == nil {
			t.Errorf("Search(%q) succeeded", q)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a", "../x", "a/../../x", "/etc/passwd", "link-out-dir/x", "docs/up/up/x", "chain1", "./.", "a\x00", "docs/up-up/ws/a.md"} {
		f.Add(s)
	}
	base := f.TempDir()
	root := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "link-out-dir"))
	os.Symlink("..", filepath.Join(root, "docs", "up"))
	os.Symlink("../..", filepath.Join(root, "docs", "up-up"))
	os.Symlink("chain2", filepath.Join(root, "chain1"))
	os.Symlink("docs/up/link-out-dir", filepath.Join(root, "chain2"))
	w, err := New(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		p, err := w.Resolve(rel)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		if !w.within(p) {
			t.Fatalf("Resolve(%q) = %q, outside %q", rel, p, w.Root())
		}
		// Whatever part of it exists must really be inside too.
		for q := p; w.within(q); q = filepath.Dir(q) {
			if real, err := filepath.EvalSymlinks(q); err == nil {
				if !w.within(real) {
					t.Fatalf("Resolve(%q) = %q, really %q", rel, p, real)
				}
				break
			}
		}
	})
}

func FuzzList(f *testing.F) {
	for _, s := range []string{"**", "*.md", "docs/**/c.go", "../*", "/etc/*", "[", "a/**/**/b", "./x/../y", "\\*", ".hidden/*", "**/*.{md,go}", "{..,docs}/*", "{/etc,a}/*", "{a,{b,c}}/{d,e}"} {
		f.Add(s)
	}
	base := f.TempDir()
	root := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(root, "docs", "deep"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	os.WriteFile(filepath.Join(base, "outside", "s.md"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "docs", "deep", "c.go"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "a.md"), nil, 0o644)
	os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "out"))
	os.Symlink(filepath.Join(base, "outside", "s.md"), filepath.Join(root, "s.md"))
	os.Symlink("..", filepath.Join(root, "docs", "up"))
	w, err := New(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		got, err := w.List(pattern)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
		for _, p := range got {
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "out/") || p == "s.md" || strings.Contains(p, "..") {
				t.Fatalf("List(%q) returned %q", pattern, p)
			}
			if _, err := w.Resolve(p); err != nil {
				t.Fatalf("List(%q) returned %q, which does not resolve: %v", pattern, p, err)
			}
		}
	})
}
