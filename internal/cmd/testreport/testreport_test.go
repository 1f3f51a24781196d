package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The files in testdata are recorded `go test -json` output. Those named
// after a package of testdata/fix were made there with
// `go test -json ./NAME/ > ../NAME.json` (hangs.json with -timeout 3s);
// filelock.json is `go test -json -run 'TestLockChild|TestLockAcrossProcesses'
// ./filelock/` and chromium.json `go test -json ./internal/chromium/` on a
// machine without Chromium and without CI set.

// TestMain is also the child process of TestCommand: with
// TESTREPORT_CHILD set it prints that file to standard output, a line to
// standard error, and exits with TESTREPORT_EXIT.
func TestMain(m *testing.M) {
	if f := os.Getenv("TESTREPORT_CHILD"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.Write(data)
		fmt.Fprintln(os.Stderr, "go: downloading example.com/dep v1.0.0")
		code := 0
		fmt.Sscan(os.Getenv("TESTREPORT_EXIT"), &code)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// check runs the checker on a recorded file and returns its exit code,
// its output and the output's last line.
func check(t *testing.T, file string, args ...string) (int, string, string) {
	t.Helper()
	in, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errOut bytes.Buffer
	code := run(args, in, &out, &errOut)
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
	return code, out.String(), lastLine(out.String())
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestRecordedRuns(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		code int
		last string
		want []string // in the output, in this order
	}{
		{"good.json", nil, 0, "4 passed, 0 failed, 0 skipped",
			[]string{"ok   example.com/fix/good", "1 packages ok, 0 failed"}},
		{"bad.json", nil, 1, "2 passed, 3 failed, 0 skipped",
			[]string{"--- FAIL: TestFails (example.com/fix/bad)", "some context", "got 2, want 3",
				"--- FAIL: TestSub/broken", "the subtest broke", "FAIL example.com/fix/bad",
				"Failures:", "FAIL example.com/fix/bad TestFails", "FAIL example.com/fix/bad TestSub/broken"}},
		{"panics.json", nil, 1, "1 passed, 1 failed, 0 skipped",
			[]string{"--- FAIL: TestPanics (example.com/fix/panics)", "panic: assignment to entry in nil map",
				"panics_test.go:9", "FAIL example.com/fix/panics TestPanics"}},
		{"broken.json", nil, 1, "0 passed, 1 failed, 0 skipped",
			[]string{"FAIL build of example.com/fix/broken", `cannot use "not an int"`, "FAIL example.com/fix/broken [build failed"}},
		{"hangs.json", nil, 1, "1 passed, 1 failed, 0 skipped",
			[]string{"--- FAIL (did not finish): TestHangs (example.com/fix/hangs)", "panic: test timed out after 3s",
				"FAIL (did not finish) example.com/fix/hangs TestHangs"}},
		{"notests.json", nil, 1, "0 passed, 1 failed, 0 skipped", []string{"no test ran"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, last := check(t, tc.file, tc.args...)
			if code != tc.code || last != tc.last {
				t.Errorf("exit %d, last line %q; want %d, %q\n%s", code, last, tc.code, tc.last, out)
			}
			rest := out
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("no %q (in order) in\n%s", w, out)
					break
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// Under CI=true a skip fails the run unless the allow-list names it;
// outside CI a skip is counted and shown, and fails nothing.
func TestSkips(t *testing.T) {
	for _, tc := range []struct {
		name, file, ci string
		args           []string
		code           int
		last           string
		want           string
	}{
		{"a helper process under CI", "filelock.json", "true", nil, 0, "1 passed, 0 failed, 1 skipped",
			"--- SKIP: TestLockChild (github.com/baton-dev/baton/internal/filelock): outside_test.go:175: started only by TestLockAcrossProcesses [allowed: the child process of TestLockAcrossProcesses]"},
		{"a missing browser under CI", "chromium.json", "true", nil, 1, "0 passed, 1 failed, 0 skipped",
			"SKIP NOT ALLOWED UNDER CI github.com/baton-dev/baton/internal/chromium TestDumpDOMAndScreenshot: chromium_test.go:13: SKIPPED, NO CHROMIUM"},
		{"a missing browser with -ci", "chromium.json", "", []string{"-ci"}, 1, "0 passed, 1 failed, 0 skipped", "SKIP NOT ALLOWED UNDER CI"},
		{"a missing browser outside CI", "chromium.json", "", nil, 0, "0 passed, 0 failed, 1 skipped",
			"--- SKIP: TestDumpDOMAndScreenshot (github.com/baton-dev/baton/internal/chromium): chromium_test.go:13: SKIPPED, NO CHROMIUM"},
		{"other packages' skips under CI", "skips.json", "true", nil, 1, "2 passed, 3 failed, 0 skipped", "SKIP NOT ALLOWED UNDER CI example.com/fix/skips TestShort/inner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			code, out, last := check(t, tc.file, tc.args...)
			if code != tc.code || last != tc.last || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, last line %q; want %d, %q and %q in\n%s", code, last, tc.code, tc.last, tc.want, out)
			}
		})
	}
}

// A stream cut off before its package ended leaves the running test a
// failure, not a silent pass.
func TestCutOffStream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hangs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, `"Output"`) && strings.Contains(l, `"Action":"fail"`) {
			continue // drop the package's end
		}
		kept = append(kept, l)
	}
	var out bytes.Buffer
	code := run(nil, strings.NewReader(strings.Join(kept, "\n")), &out, &out)
	if code != 1 || lastLine(out.String()) != "1 passed, 1 failed, 0 skipped" || !strings.Contains(out.String(), "FAIL (did not finish) example.com/fix/hangs TestHangs") {
		t.Errorf("exit %d\n%s", code, out.String())
	}
}

// With a command, the checker runs it, reads its standard output as
// events, passes its standard error through, and fails when it exits in
// error even though its output showed no failure.
func TestCommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		exit, code int
		last, want string
	}{
		{0, 0, "4 passed, 0 failed, 0 skipped", "go: downloading example.com/dep v1.0.0"},
		{3, 1, "4 passed, 1 failed, 0 skipped", "go test ended in error with no failure reported: " + exe + ": exit status 3"},
	} {
		t.Run(fmt.Sprint("exit ", tc.exit), func(t *testing.T) {
			t.Setenv("TESTREPORT_CHILD", filepath.Join("testdata", "good.json"))
			t.Setenv("TESTREPORT_EXIT", fmt.Sprint(tc.exit))
			var out bytes.Buffer
			code := run([]string{exe}, nil, &out, &out)
			if code != tc.code || lastLine(out.String()) != tc.last || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit %d; want %d, %q and %q in\n%s", code, tc.code, tc.last, tc.want, out.String())
			}
		})
	}
	var out bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "no-such-program")}, nil, &out, &out); code != 1 || !strings.Contains(out.String(), "cannot start") {
		t.Errorf("a command that cannot start: exit %d\n%s", code, out.String())
	}
}

// Every allow-list entry that names a test names one that exists, in the
// package it names, and its reason is a skip message in baton's source: an
// entry left behind by a rename would otherwise allow nothing, or the
// wrong thing.
func TestAllowListNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var source strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") && !strings.HasPrefix(p, filepath.Join(root, "internal", "cmd", "testreport")) {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			source.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allowList {
		if a.Why == "" || a.Reason == "" {
			t.Errorf("%+v: every entry needs a reason and a why", a)
		}
		if !strings.Contains(source.String(), a.Reason) {
			t.Errorf("%+v: no skip in baton's source says %q", a, a.Reason)
		}
		if a.Test == "" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(a.Package), "*_test.go"))
		top := regexp.MustCompile(`\nfunc ` + regexp.QuoteMeta(strings.Split(a.Test, "/")[0]) + `\(t \*testing\.T\)`)
		found := false
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || top.Match(data)
		}
		if !found {
			t.Errorf("%+v: no such test in %s", a, a.Package)
		}
	}
}
