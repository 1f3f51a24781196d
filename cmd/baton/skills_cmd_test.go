package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/skill"
)

const skillTestdata = "../../skill/testdata"

func writeTestSkill(t *testing.T, dir, folder, content string) string {
	t.Helper()
	p := filepath.Join(dir, folder)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, skill.FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSkillsList(t *testing.T) {
	custom := t.TempDir()
	writeTestSkill(t, custom, "summarization", "---\nname: summarization\ndescription: My own summaries.\n---\nSummarise.\n")
	writeTestSkill(t, custom, "legal-review", "---\nname: legal-review\ndescription: Review contracts\n  for risky clauses.\n---\nReview.\n")

	code, out, errOut := runBaton(t, "", "skills", "list", "--skills", custom)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1+len(skill.Builtins().List())+1 {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], "NAME") {
		t.Errorf("no header: %q", lines[0])
	}
	// Columns are aligned: the description starts at the same offset on
	// every line.
	col := strings.Index(lines[0], "DESCRIPTION")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("misaligned line %q (description column %d)", l, col)
		}
	}
	wantRows := map[string]*regexp.Regexp{
		"fact-extraction": regexp.MustCompile(`^fact-extraction\s+built-in\s+Pull specific facts`),
		"summarization":   regexp.MustCompile(`^summarization\s+` + regexp.QuoteMeta(filepath.Join(custom, "summarization", "SKILL.md")) + `\s+My own summaries\.$`),
		"legal-review":    regexp.MustCompile(`^legal-review\s+\S+\s+Review contracts for risky clauses\.$`),
	}
	for name, re := range wantRows {
		found := false
		for _, l := range lines {
			if re.MatchString(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("no row for %s matching %s in:\n%s", name, re, out)
		}
	}
}

func TestSkillsShow(t *testing.T) {
	code, out, errOut := runBaton(t, "", "skills", "show", "Gap_Analysis")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	s, _ := skill.Builtins().Get("gap-analysis")
	for _, want := range []string{
		"name:          gap-analysis\n",
		"source:        built-in\n",
		"description:   " + s.Description + "\n",
		"metadata:\n  output-hint: " + s.OutputHint + "\n",
		"\n\n" + s.Body + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runBaton(t, "", "skills", "show", "no-such-skill")
	if code != exitError || out != "" || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, `unknown skill "no-such-skill"`) || !strings.Contains(errOut, "fact-extraction, gap-analysis") {
		t.Errorf("unknown skill: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runBaton(t, "", "skills", "show"); code != exitUsage {
		t.Errorf("show without NAME: exit %d, want %d", code, exitUsage)
	}
}

func TestSkillsShowCustomFields(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "tidy", "---\nname: tidy\ndescription: |\n  Line one.\n  Line two.\nlicense: MIT\nallowed-tools: Read Grep\nmetadata:\n  b: 2\n  a: one\n---\nBody text.\n")
	code, out, errOut := runBaton(t, "", "skills", "--skills", dir, "show", "tidy")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "name:          tidy\n" +
		"source:        " + filepath.Join(dir, "tidy", "SKILL.md") + "\n" +
		"description:   Line one.\n               Line two.\n" +
		"license:       MIT\n" +
		"allowed-tools: Read Grep\n" +
		"metadata:\n  a: one\n  b: 2\n" +
		"\nBody text.\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestSkillsInvalidCustomFails(t *testing.T) {
	dir := t.TempDir()
	writeTestSkill(t, dir, "broken", "---\nname: broken\n---\nBody.\n")
	for _, args := range [][]string{
		{"skills", "list", "--skills", dir},
		{"skills", "show", "--skills", dir, "fact-extraction"},
	} {
		code, out, errOut := runBaton(t, "", args...)
		if code != exitError || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], "description") ||
			!strings.Contains(lines[1], "baton skills validate") {
			t.Errorf("%v: stderr %q", args, errOut)
		}
	}
	code, _, errOut := runBaton(t, "", "skills", "list", "--skills", filepath.Join(dir, "nope"))
	if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("missing --skills dir: exit %d, stderr %q", code, errOut)
	}
}

func TestSkillsValidate(t *testing.T) {
	line := regexp.MustCompile(`^(error|warning): \S+: \S+: .+$`)
	tests := []struct {
		name     string
		args     []string
		code     int
		errors   int
		warnings int
		summary  string
	}{
		{"public skills", []string{filepath.Join(skillTestdata, "public")}, exitOK, 0, 1, "checked 6 skills: 0 errors, 1 warning"},
		{"variants warn only", []string{filepath.Join(skillTestdata, "variants")}, exitOK, 0, 19, "checked 14 skills: 0 errors, 19 warnings"},
		{"one SKILL.md", []string{filepath.Join(skillTestdata, "variants", "bom", "SKILL.md")}, exitOK, 0, 1, "checked 1 skill: 0 errors, 1 warning"},
		{"invalid", []string{filepath.Join(skillTestdata, "invalid")}, exitError, 10, 0, "checked 9 skills: 10 errors, 0 warnings"},
		{"missing path", []string{filepath.Join(skillTestdata, "nope")}, exitError, 1, 0, "checked 0 skills: 1 error, 0 warnings"},
		{"mixed", []string{filepath.Join(skillTestdata, "invalid", "unterminated"), filepath.Join(skillTestdata, "variants", "host-keys")}, exitError, 1, 5, "checked 2 skills: 1 error, 5 warnings"},
		{"via --skills", []string{"--skills", filepath.Join(skillTestdata, "variants", "crlf")}, exitOK, 0, 0, "checked 1 skill: 0 errors, 0 warnings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runBaton(t, "", append([]string{"skills", "validate"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if got := lines[len(lines)-1]; got != tt.summary {
				t.Errorf("summary %q, want %q", got, tt.summary)
			}
			var nerr, nwarn int
			for _, l := range lines[:len(lines)-1] {
				if !line.MatchString(l) {
					t.Errorf("malformed problem line %q", l)
				}
				if strings.HasPrefix(l, "error: ") {
					nerr++
				} else {
					nwarn++
				}
			}
			if nerr != tt.errors || nwarn != tt.warnings {
				t.Errorf("printed %d errors and %d warnings, want %d and %d:\n%s", nerr, nwarn, tt.errors, tt.warnings, out)
			}
		})
	}
	if code, _, _ := runBaton(t, "", "skills", "validate"); code != exitUsage {
		t.Errorf("validate without DIR: exit %d, want %d", code, exitUsage)
	}
}

func TestSkillsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"skills", "list", "extra"},
		{"skills", "bogus"},
		{"skills", "list", "--skills"},
	} {
		if code, _, _ := runBaton(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// A suite keeps its skills several folders down (skills/<group>/<area>/<name>):
// validate finds every one of them, not "no SKILL.md".
func TestSkillsValidateDeepTree(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"eng/backend/api-review", "eng/frontend/a11y/contrast-check", "ops/runbook"} {
		name := filepath.Base(p)
		writeTestSkill(t, root, filepath.FromSlash(p), "---\nname: "+name+"\ndescription: Checks.\n---\nCheck.\n")
	}
	code, out, errOut := runBaton(t, "", "skills", "validate", root)
	if code != exitOK {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(out, "checked 3 skills: 0 errors, 0 warnings") {
		t.Errorf("stdout = %q, want all three skills checked", out)
	}
}
