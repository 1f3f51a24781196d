package docscheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// MaxWords is the longest sentence the documentation may have: past it a
// reader loses the start before the end, and a list does better.
const MaxWords = 35

// repo is the repository root, seen from this package.
const repo = "../.."

// pendingLinks are pages linked before they exist, each written with the
// change that brings what it documents.
var pendingLinks = map[string]bool{}

// markdownFiles returns README.md and every markdown file under docs/, as
// paths relative to the repository root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repo, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v: no file under docs/", files)
	}
	return files
}

func parseFile(t *testing.T, rel string) *Doc {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(src)
}

// Every sentence of running text in README.md and docs/ has at most
// MaxWords words. Code blocks, tables and headings are not running text.
func TestDocSentencesAreShort(t *testing.T) {
	for _, rel := range markdownFiles(t) {
		for _, s := range parseFile(t, rel).Sentences {
			if s.Words > MaxWords {
				t.Errorf("%s:%d: a sentence of %d words (at most %d; split it or make it a list): %s", rel, s.Line, s.Words, MaxWords, s.Text)
			}
		}
	}
}

// Every relative link in README.md and docs/ names a file that exists and,
// when it has a fragment, a heading of that file.
func TestDocRelativeLinksResolve(t *testing.T) {
	docs := map[string]*Doc{}
	load := func(rel string) *Doc {
		if d, ok := docs[rel]; ok {
			return d
		}
		d := parseFile(t, rel)
		docs[rel] = d
		return d
	}
	checked := 0
	for _, rel := range markdownFiles(t) {
		for _, l := range load(rel).Links {
			u, err := url.Parse(l.Dest)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.Line, l.Dest, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue
			}
			checked++
			target := rel
			if u.Path != "" {
				target = path.Clean(path.Join(path.Dir(rel), u.Path))
			}
			if pendingLinks[target] {
				continue
			}
			info, err := os.Stat(filepath.Join(repo, filepath.FromSlash(target)))
			if err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", rel, l.Line, l.Dest, target)
				continue
			}
			if u.Fragment == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: a fragment on %s, which has no headings", rel, l.Line, l.Dest, target)
				continue
			}
			if !load(target).Anchors[u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", rel, l.Line, l.Dest, target, u.Fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the parser missed them")
	}
}

func TestSplit(t *testing.T) {
	long := strings.Repeat("word ", 36)
	for _, c := range []struct {
		name, text string
		want       []int
	}{
		{"two sentences", "One two three. Four five?", []int{3, 2}},
		{"closing bracket", "It ran (twice.) Then stopped!", []int{3, 2}},
		{"abbreviation", "Name a model, e.g. opus. Done.", []int{5, 1}},
		{"code span is one word", "Run \x00 now. Then \x00.", []int{3, 2}},
		{"code span ends a sentence", "Set \x00. Then run \x00, \x00.", []int{2, 4}},
		{"decimal", "It sent 0.33 of the call.", []int{6}},
		{"punctuation is no word", "A — B → C.", []int{3}},
		{"no end", long, []int{36}},
	} {
		var got []int
		for _, s := range Split(c.text) {
			got = append(got, s.Words)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: Split(%q) = %v, want %v", c.name, c.text, got, c.want)
		}
	}
}

// Parse finds long sentences in paragraphs and list items, and none in
// code blocks, tables or headings, whose text it reads for anchors only.
func TestParse(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("word ", 40))
	src := "# The `baton ask` command\n\n" + long + ".\n\n- " + long + ".\n\n```sh\n" + long + "\n```\n\n| a | b |\n|---|---|\n| " + long + " | [x](docs/x.md#y) |\n\n    " + long + "\n\n## Notes\n\n## Notes\n\nSee [the notes](#notes-1), `a b c d e f g`.\n"
	d := Parse([]byte(src))
	var lines []int
	for _, s := range d.Sentences {
		if s.Words > MaxWords {
			lines = append(lines, s.Line)
		}
	}
	if len(lines) != 2 || lines[0] != 3 || lines[1] != 5 {
		t.Errorf("long sentences on lines %v, want [3 5] (the paragraph and the list item)", lines)
	}
	for _, a := range []string{"the-baton-ask-command", "notes", "notes-1"} {
		if !d.Anchors[a] {
			t.Errorf("no anchor %q in %v", a, d.Anchors)
		}
	}
	var dests []string
	for _, l := range d.Links {
		dests = append(dests, l.Dest)
	}
	if strings.Join(dests, " ") != "docs/x.md#y #notes-1" {
		t.Errorf("links %v, want the table's and the paragraph's", dests)
	}
	last := d.Sentences[len(d.Sentences)-1]
	if last.Words != 4 {
		t.Errorf("the last sentence has %d words, want 4 (a code span is one): %q", last.Words, last.Text)
	}
}
