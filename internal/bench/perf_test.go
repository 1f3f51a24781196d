package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/slice"
)

func python(t *testing.T) string {
	return testdep.LookPath(t, "python3")
}

// runAssemblerPy runs the design note's assembler on doc.
func runAssemblerPy(t *testing.T, doc string, args ...string) string {
	dir := t.TempDir()
	docPath, py := filepath.Join(dir, "doc.md"), filepath.Join(dir, "assembler.py")
	if err := os.WriteFile(docPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(py, assemblerPy, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python(t), append([]string{py, docPath}, args...)...).Output()
	if err != nil {
		t.Fatalf("assembler.py %v: %v", args, err)
	}
	return string(out)
}

// TestAssemblerPyFollowsTheNote: the rules design note 002 states, each of
// which the Python assembler must keep for the comparison to be with it.
func TestAssemblerPyFollowsTheNote(t *testing.T) {
	doc := "# Top\nintro\n## Results\nr1\n### Detail\nd1\n## Methods\nm1\n# Next\nn1"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"case-insensitive, to the next equal or higher header", []string{"--section", "rESULTS"}, "## Results\nr1\n### Detail\nd1"},
		{"a top section runs to the next top header", []string{"--section", "top"}, "# Top\nintro\n## Results\nr1\n### Detail\nd1\n## Methods\nm1"},
		{"lines are 1-indexed and inclusive", []string{"--lines", "2-4"}, "intro\n## Results\nr1"},
		{"sections first, then lines", []string{"--section", "Methods", "--lines", "1-1"}, "## Methods\nm1"},
		{"lines when no section matches", []string{"--section", "Nothing", "--lines", "10-10"}, "n1"},
		{"the full context when nothing matches", []string{"--section", "Nothing"}, doc},
	}
	for _, tc := range cases {
		if got := runAssemblerPy(t, doc, tc.args...); got != tc.want {
			t.Errorf("%s: %v gave %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

// TestSliceSpeedPointersCutTheSameLines: the speed comparison is fair only
// if both assemblers cut the same text for its pointers.
func TestSliceSpeedPointersCutTheSameLines(t *testing.T) {
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	doc, titles := perfDoc(tasks, 300<<10)
	ptrs := perfPointers(titles)
	r := slice.ParseString(doc).Extract(slice.Pointers{Sections: ptrs})
	if len(r.Matched) != len(ptrs) || r.Fallback {
		t.Fatalf("baton matched %d of %d pointers (fallback %v): %v", len(r.Matched), len(ptrs), r.Fallback, r.Warnings)
	}
	var args []string
	for _, p := range ptrs {
		args = append(args, "--section", p)
	}
	py := runAssemblerPy(t, doc, args...)
	// Python joins the sections with a blank line and drops each one's
	// final newline; the lines are the same.
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if norm(py) != norm(r.Text) {
		t.Errorf("the assemblers cut different text: Python %d bytes, baton %d", len(py), len(r.Text))
	}
}

func TestPerfMedian(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {ms(5), 5 * time.Millisecond}, {ms(9, 1, 5), 5 * time.Millisecond}, {ms(4, 1, 3, 2), 2500 * time.Microsecond}} {
		if got := perfMedian(tc.in); got != tc.want {
			t.Errorf("perfMedian(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
