package slice

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadDoc(t testing.TB, name string) *Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(b)
}

// outlineString renders an outline compactly so a golden file shows the
// whole structure at a glance.
func outlineString(hs []Heading) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%d-%d %s %s", h.Line, h.EndLine, strings.Repeat("#", h.Level), h.Title)
		if len(h.Path) > 0 {
			fmt.Fprintf(&b, "  [%s]", strings.Join(h.Path, " > "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestOutlineGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(files) < 6 {
		t.Fatalf("want at least 6 test documents, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "SOURCES.md" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			d := loadDoc(t, name)
			got := outlineString(d.Outline())
			golden(t, filepath.Join("testdata", "outline", strings.TrimSuffix(name, ".md")+".txt"), got)
			// Every heading's line must actually be the heading in the
			// source, and its section must lie inside the document.
			lines := d.Lines()
			for _, h := range d.Outline() {
				if h.Line < 1 || h.EndLine < h.Line || h.EndLine > len(lines) {
					t.Errorf("%q: span %d-%d outside 1-%d", h.Title, h.Line, h.EndLine, len(lines))
				}
			}
		})
	}
}

func TestParseStructure(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty", "", ""},
		{"atx and setext", "# A\ntext\n\nB\n---\nmore\n## C\n", "1-7 # A\n4-6 ## B  [A]\n7-7 ## C  [A]\n"},
		{"setext swallows its paragraph", "text\nB\n---\n", "1-3 ## text B\n"},
		{"setext over two lines", "one\ntwo\n===\nbody\n", "1-4 # one two\n"},
		{"fenced hash is not a heading", "# A\n```\n# not\n```\n", "1-4 # A\n"},
		{"tilde fence", "~~~\n# not\n~~~\n## B\n", "4-4 ## B\n"},
		{"indented code", "    # not\n\n# A\n", "3-3 # A\n"},
		{"html block", "<div>\n# not\n</div>\n\n# A\n", "5-5 # A\n"},
		{"front matter", "---\n# not: yaml\ntitle: x\n---\n# A\n", "5-5 # A\n"},
		{"unclosed front matter is markdown", "---\n# A\n", "2-2 # A\n"},
		{"quoted heading is content", "# A\n> # quote\n- # item\n", "1-3 # A\n"},
		{"hashtag line is not ATX", "#tag\n", ""},
		{"setext starting with hash", "#tag\n===\n", "1-2 # #tag\n"},
		{"markup reduced", "## **Bold** `code` [link](http://x) ![alt](i.png) <a id=\"x\"></a>\n", "1-1 ## Bold code link alt\n"},
		{"closing hashes", "## Title ##\n", "1-1 ## Title\n"},
		{"crlf", "# A\r\nx\r\n## B\r\ny\r\n", "1-4 # A\n3-4 ## B  [A]\n"},
		{"no trailing newline", "# A\nlast", "1-2 # A\n"},
		{"empty heading", "#\ntext\n# B\n", "1-2 # \n3-3 # B\n"},
		{"deeper then shallower", "### c\n# a\n## b\n", "1-1 ### c\n2-3 # a\n3-3 ## b  [a]\n"},
		{"escapes and entities", "# A \\*star\\* &amp; B\n", "1-1 # A *star* & B\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outlineString(Parse([]byte(tt.src)).Outline())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outline (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLines(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"", []string{}},
		{"\n", []string{""}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
	}
	for _, tt := range tests {
		d := Parse([]byte(tt.src))
		if diff := cmp.Diff(tt.want, d.Lines()); diff != "" {
			t.Errorf("Lines(%q) (-want +got):\n%s", tt.src, diff)
		}
		if d.Text() != tt.src {
			t.Errorf("Text() = %q, want %q", d.Text(), tt.src)
		}
	}
}
