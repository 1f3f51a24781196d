package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// The -update flag may be registered by another command's tests in this
// package; share it rather than registering it twice.
var sliceUpdate = func() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite golden files under testdata/")
	return func() bool { return *b }
}()

const sliceDoc = "../../slice/testdata/report.md"

func TestSliceJSONGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"sections", []string{"--section", "Results > Cost", "--section", "**Executive Summary**:"}},
		{"lines and overlap", []string{"--lines", "36-38", "--section", "2.2 Cost", "--lines", "900-950"}},
		{"unmatched falls back", []string{"--section", "Appendix C"}},
		{"ambiguous and fuzzy", []string{"--doc", "../../slice/testdata/setext.md", "--section", "Overview", "--section", "Deploymnet", "--section", "Billing > Deploymnet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"slice", "--json"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--doc") {
				args = append(args, "--doc", sliceDoc)
			}
			code, out, _ := runBaton(t, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d", code)
			}
			path := filepath.Join("testdata", "slice", strings.ReplaceAll(tt.name, " ", "_")+".json")
			if sliceUpdate() {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), out); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
			var got sliceJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Tokens != tokens.Count(got.Text) || got.Matched == nil || got.Unmatched == nil {
				t.Errorf("tokens %d for the text (want %d); matched %v, unmatched %v must be arrays", got.Tokens, tokens.Count(got.Text), got.Matched, got.Unmatched)
			}
			if got.Fallback != (len(got.Matched) == 0) {
				t.Errorf("fallback %v with %d matches", got.Fallback, len(got.Matched))
			}
		})
	}
}

func TestSliceCommand(t *testing.T) {
	src, err := os.ReadFile(sliceDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	tests := []struct {
		name      string
		stdin     string
		args      []string
		code      int
		stdout    string
		stderrHas []string
		stderrN   int // lines on stderr
	}{
		{name: "section", args: []string{"--doc", sliceDoc, "--section", "Cost"}, stdout: strings.Join(lines[35:39], "")},
		{name: "lines", args: []string{"--doc", sliceDoc, "--lines", "1-2", "--lines", "9"}, stdout: lines[0] + lines[1] + lines[8]},
		{name: "stdin", stdin: "# A\nx\n# B\ny", args: []string{"--doc", "-", "--section", "b"}, stdout: "# B\ny\n"},
		{name: "title of a heading with an attribute block", stdin: "# A {#a}\nx\n## Flow Limits {#fc-credit .x}\ny\n# C\n", args: []string{"--doc", "-", "--section", "Flow Limits"}, stdout: "## Flow Limits {#fc-credit .x}\ny\n"},
		{name: "title with its attribute block", stdin: "# A {#a}\nx\n## Flow Limits {#fc-credit}\ny\n# C\n", args: []string{"--doc", "-", "--section", "Flow Limits {#fc-credit}"}, stdout: "## Flow Limits {#fc-credit}\ny\n"},
		{name: "id of an attribute block", stdin: "# A {#a}\nx\n## Flow Limits {#fc-credit}\ny\n# C\n", args: []string{"--doc", "-", "--section", "#fc-credit"}, stdout: "## Flow Limits {#fc-credit}\ny\n"},
		{name: "unmatched warns", args: []string{"--doc", sliceDoc, "--section", "Cost", "--section", "Nope"}, stdout: strings.Join(lines[35:39], ""),
			stderrHas: []string{`section "Nope" matched nothing`}, stderrN: 1},
		{name: "fallback warns", args: []string{"--doc", sliceDoc, "--lines", "900-950"}, stdout: string(src),
			stderrHas: []string{"lines 900-950 matched nothing", "whole document"}, stderrN: 2},
		{name: "no pointers", args: []string{"--doc", sliceDoc}, stdout: string(src), stderrHas: []string{"no pointers given"}, stderrN: 1},
		{name: "bad lines", args: []string{"--doc", sliceDoc, "--lines", "ten-twenty"}, code: exitUsage, stderrHas: []string{`--lines "ten-twenty"`}, stderrN: 1},
		{name: "huge line number", args: []string{"--doc", sliceDoc, "--lines", "1-99999999999999999999"}, code: exitUsage, stderrN: 1},
		{name: "missing doc flag", args: []string{"--section", "x"}, code: exitUsage, stderrHas: []string{"--doc"}, stderrN: 1},
		{name: "missing file", args: []string{"--doc", "nope.md"}, code: exitError, stderrHas: []string{"nope.md"}, stderrN: 1},
		{name: "stray argument", args: []string{"--doc", sliceDoc, "Results"}, code: exitUsage, stderrN: 1},
		{name: "outline", stdin: "# A\n\n## B\n```\n# no\n```\n# C\n", args: []string{"--doc", "-", "--outline"},
			stdout: "1-6  # A\n3-6    ## B  [A > B]\n7-7  # C\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runBaton(t, tt.stdin, append([]string{"slice"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			if tt.code == exitOK {
				if diff := cmp.Diff(tt.stdout, out); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if n := strings.Count(errOut, "\n"); n != tt.stderrN {
				t.Errorf("stderr has %d lines, want %d: %q", n, tt.stderrN, errOut)
			}
		})
	}
}

func TestSliceCombinedDocs(t *testing.T) {
	code, out, errOut := runBaton(t, "", "slice", "--json", "--doc", sliceDoc, "--doc", "../../slice/testdata/runbook.md",
		"--section", "../../slice/testdata/runbook.md > Rollback", "--section", "../../slice/testdata/report.md > Cost")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got sliceJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 2 || len(got.Matched) != 2 || got.Fallback {
		t.Fatalf("files %+v matched %+v", got.Files, got.Matched)
	}
	for _, m := range got.Matched {
		f := got.Files[0]
		if strings.Contains(m.Pointer, "runbook") {
			f = got.Files[1]
		}
		if _, ok := f.SourceLine(m.StartLine); !ok {
			t.Errorf("match %+v is not inside %+v", m, f)
		}
	}
	if !strings.Contains(got.Text, "promote the other replica") || !strings.Contains(got.Text, "Spend fell 8%") {
		t.Errorf("text %q", got.Text)
	}
}

func TestParseLineRange(t *testing.T) {
	tests := []struct {
		in   string
		want [2]int
		ok   bool
	}{
		{"1-5", [2]int{1, 5}, true}, {" 3 - 4 ", [2]int{3, 4}, true}, {"7", [2]int{7, 7}, true}, {"2:9", [2]int{2, 9}, true},
		{"9-2", [2]int{9, 2}, true}, {"", [2]int{}, false}, {"-1-5", [2]int{}, false}, {"1-", [2]int{}, false}, {"a-b", [2]int{}, false}, {"1-2-3", [2]int{}, false},
	}
	for _, tt := range tests {
		got, err := parseLineRange(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseLineRange(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func FuzzParseLineRange(f *testing.F) {
	for _, s := range []string{"1-5", "7", "2:9", "9-2", "", "-1", "a-b", " 3 - 4 ", "99999999999999999999-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseLineRange(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if r[0] < 0 || r[1] < 0 {
			t.Fatalf("parseLineRange(%q) = %v: negative line", s, r)
		}
	})
}

// The outline names every heading by a unique path, and --section takes the
// path back to cut that section alone.
func TestSliceOutlineUniquePaths(t *testing.T) {
	doc := "# Vendors\n## Acme\n### Pricing\n$10\n## Globex\n### Pricing\n$99\n"
	code, out, errOut := runBaton(t, doc, "slice", "--doc", "-", "--outline", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var hs []struct {
		Title      string `json:"title"`
		UniquePath string `json:"unique_path"`
	}
	if err := json.Unmarshal([]byte(out), &hs); err != nil {
		t.Fatal(err)
	}
	if len(hs) != 5 || hs[4].UniquePath != "Vendors > Globex > Pricing" {
		t.Fatalf("outline %+v", hs)
	}
	code, out, errOut = runBaton(t, doc, "slice", "--doc", "-", "--section", hs[4].UniquePath)
	if code != exitOK || out != "### Pricing\n$99\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runBaton(t, doc, "slice", "--doc", "-", "--section", "Pricing")
	if code != exitOK || out != doc || !strings.Contains(errOut, "ambiguous") || !strings.Contains(errOut, `"Vendors > Acme > Pricing" (lines 3-4)`) {
		t.Errorf("bare Pricing: exit %d, stdout %q, stderr %q; want the whole document and an ambiguity warning", code, out, errOut)
	}
}

// TestSliceLinesAloneDoesNotParse: --lines with no --section or --outline
// cuts the lines without parsing the markdown (on 10 MB the parse was most
// of the command's time), and prints what a parsed document would.
func TestSliceLinesAloneDoesNotParse(t *testing.T) {
	args := []string{"slice", "--doc", sliceDoc, "--lines", "3-9", "--lines", "20-22", "--lines", "5000-5001"}
	data, err := os.ReadFile(sliceDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := slice.Parse(data).Extract(slice.Pointers{LineRanges: [][2]int{{3, 9}, {20, 22}, {5000, 5001}}}).Text
	parsed := 0
	orig := parseMarkdown
	parseMarkdown = func(ctx context.Context, src []byte) (*slice.Document, error) { parsed++; return orig(ctx, src) }
	defer func() { parseMarkdown = orig }()
	code, got, stderr := runBaton(t, "", args...)
	if code != exitOK || parsed != 0 {
		t.Fatalf("exit %d, parsed %d times; stderr %s", code, parsed, stderr)
	}
	if got != want {
		t.Errorf("--lines alone printed\n%s\nwant\n%s", got, want)
	}
	runBaton(t, "", "slice", "--doc", sliceDoc, "--section", "Results")
	if parsed != 1 {
		t.Errorf("a --section cut parsed %d times, want 1", parsed)
	}
}
