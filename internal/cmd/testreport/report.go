package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (see cmd/test2json), with the
// fields the go command adds for build output.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

type testKey struct{ pkg, test string }

// counts are one package's results so far.
type counts struct{ passed, failed, skipped int }

// report reads the events of one `go test -json` run, prints readable
// progress as they come, and keeps what the summary needs. Every problem
// it records is one failure in the closing line: a failed test, a test
// that never finished in a failed package, a skip that CI does not allow,
// a package that failed with no failed test (a build failure, an error in
// TestMain), go test ending in error with nothing else failed, and a run
// in which no test ran at all.
type report struct {
	w io.Writer
	// strict makes a skip that is not on the allow-list a failure, as it
	// is under CI=true.
	strict bool

	out      map[testKey]*strings.Builder // output so far, per test; test "" is the package's own
	running  map[testKey]bool
	builds   map[string]*strings.Builder // build output per import path
	pkgs     map[string]*counts
	problems []string
	passed   int
	skipped  int
	pkgOK    int
	pkgFail  int
	// badSkips counts the skips that failed the run.
	badSkips int
}

func newReport(w io.Writer, strict bool) *report {
	return &report{w: w, strict: strict, out: map[testKey]*strings.Builder{}, running: map[testKey]bool{},
		builds: map[string]*strings.Builder{}, pkgs: map[string]*counts{}}
}

// read consumes r to its end: each line an event, or any other text,
// which is printed as it is (the go command's own messages).
func (r *report) read(in io.Reader) error {
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var e event
			if line[0] == '{' && json.Unmarshal(line, &e) == nil && e.Action != "" {
				r.event(e)
			} else {
				r.w.Write(line)
				if line[len(line)-1] != '\n' {
					fmt.Fprintln(r.w)
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the test output: %w", err)
		}
	}
}

func (r *report) event(e event) {
	switch e.Action {
	case "build-output":
		buf(r.builds, e.ImportPath).WriteString(e.Output)
		return
	case "build-fail":
		fmt.Fprintf(r.w, "FAIL build of %s\n%s", e.ImportPath, indent(text(r.builds, e.ImportPath)))
		return
	}
	k := testKey{e.Package, e.Test}
	if e.Test == "" {
		r.packageEvent(k, e)
		return
	}
	c := r.pkg(e.Package)
	switch e.Action {
	case "run":
		r.running[k] = true
	case "output":
		buf(r.out, k).WriteString(e.Output)
	case "pass":
		r.passed++
		c.passed++
		r.end(k)
	case "fail":
		c.failed++
		r.fail(k, "FAIL")
		r.end(k)
	case "skip":
		r.skip(k, c)
		r.end(k)
	}
}

func (r *report) packageEvent(k testKey, e event) {
	switch e.Action {
	case "output":
		buf(r.out, k).WriteString(e.Output)
	case "pass":
		r.pkgOK++
		c := r.pkg(e.Package)
		fmt.Fprintf(r.w, "ok   %s %.1fs (%d passed, %d skipped)\n", e.Package, e.Elapsed, c.passed, c.skipped)
		delete(r.out, k)
	case "fail":
		r.pkgFail++
		r.failPackage(e)
	case "skip": // no test files
		delete(r.out, k)
	}
}

// failPackage reports the tests of a failed package that never ended (a
// timeout, a panic outside a test, os.Exit) and the package's own output.
func (r *report) failPackage(e event) {
	c := r.pkg(e.Package)
	var unfinished []string
	for k := range r.running {
		if k.pkg == e.Package {
			unfinished = append(unfinished, k.test)
		}
	}
	sort.Strings(unfinished)
	for _, t := range unfinished {
		k := testKey{e.Package, t}
		c.failed++
		r.fail(k, "FAIL (did not finish)")
		r.end(k)
	}
	k := testKey{e.Package, ""}
	fmt.Fprintf(r.w, "FAIL %s %.1fs\n%s", e.Package, e.Elapsed, indent(text(r.out, k)))
	delete(r.out, k)
	switch {
	case e.FailedBuild != "":
		r.problem("FAIL %s [build failed: %s]", e.Package, e.FailedBuild)
	case c.failed == 0:
		r.problem("FAIL %s (no test failed: see the package's output above)", e.Package)
	}
}

// fail prints a failed test with its output and records it.
func (r *report) fail(k testKey, what string) {
	fmt.Fprintf(r.w, "--- %s: %s (%s)\n%s", what, k.test, k.pkg, indent(trimFraming(text(r.out, k))))
	r.problem("%s %s %s", what, k.pkg, k.test)
}

// skip counts a skipped test, or under strict a failure unless the skip
// is on the allow-list.
func (r *report) skip(k testKey, c *counts) {
	reason := skipReason(text(r.out, k))
	why := allowed(k.pkg, k.test, reason)
	switch {
	case !r.strict:
		r.skipped++
		c.skipped++
		fmt.Fprintf(r.w, "--- SKIP: %s (%s): %s\n", k.test, k.pkg, reason)
	case why != "":
		r.skipped++
		c.skipped++
		fmt.Fprintf(r.w, "--- SKIP: %s (%s): %s [allowed: %s]\n", k.test, k.pkg, reason, why)
	default:
		c.failed++
		r.badSkips++
		fmt.Fprintf(r.w, "--- SKIP NOT ALLOWED UNDER CI: %s (%s): %s\n", k.test, k.pkg, reason)
		r.problem("SKIP NOT ALLOWED UNDER CI %s %s: %s", k.pkg, k.test, reason)
	}
}

// finish records what the end of the stream leaves open: tests of a
// package whose end never came, go test's own error when nothing else
// failed, and a run with no test in it. It returns whether all passed.
func (r *report) finish(runErr error) bool {
	var open []testKey
	for k := range r.running {
		open = append(open, k)
	}
	sort.Slice(open, func(i, j int) bool {
		return open[i].pkg < open[j].pkg || open[i].pkg == open[j].pkg && open[i].test < open[j].test
	})
	for _, k := range open {
		r.fail(k, "FAIL (did not finish)")
		r.end(k)
	}
	if runErr != nil && len(r.problems) == 0 {
		r.problem("go test ended in error with no failure reported: %v", runErr)
	}
	if r.passed+r.skipped+len(r.problems) == 0 {
		r.problem("no test ran")
	}
	return len(r.problems) == 0
}

// summary prints every problem again, so they stand together at the end
// of a long log, and the closing line.
func (r *report) summary() {
	fmt.Fprintf(r.w, "\n%d packages ok, %d failed\n", r.pkgOK, r.pkgFail)
	if len(r.problems) > 0 {
		fmt.Fprintln(r.w, "Failures:")
		for _, p := range r.problems {
			fmt.Fprintln(r.w, "  "+p)
		}
		if r.badSkips > 0 {
			fmt.Fprintln(r.w, "(under CI=true a skip is a failure unless internal/cmd/testreport/allow.go allows it)")
		}
	}
	fmt.Fprintf(r.w, "%d passed, %d failed, %d skipped\n", r.passed, len(r.problems), r.skipped)
}

func (r *report) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *report) end(k testKey) {
	delete(r.running, k)
	delete(r.out, k)
}

func (r *report) pkg(name string) *counts {
	if r.pkgs[name] == nil {
		r.pkgs[name] = &counts{}
	}
	return r.pkgs[name]
}

// buf is m's builder for k, made on first use.
func buf[K comparable](m map[K]*strings.Builder, k K) *strings.Builder {
	if m[k] == nil {
		m[k] = &strings.Builder{}
	}
	return m[k]
}

// text is what m holds for k, "" when nothing.
func text[K comparable](m map[K]*strings.Builder, k K) string {
	if b := m[k]; b != nil {
		return b.String()
	}
	return ""
}

// trimFraming drops the lines the testing package adds around a test's
// own output (=== RUN, PAUSE, CONT, NAME).
func trimFraming(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "=== ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// skipReason is a skipped test's own message on one line: its output
// without the framing and the --- SKIP line.
func skipReason(s string) string {
	var parts []string
	for line := range strings.Lines(trimFraming(s)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--- SKIP") {
			parts = append(parts, line)
		}
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("    " + strings.TrimRight(line, "\n") + "\n")
	}
	return b.String()
}
