// Command testreport runs `go test -json` and tells the truth about it:
// readable progress as packages end (each failed test with its output,
// each skip with its reason, one line per package that passed), a summary
// of every failure at the end, and the closing line
//
//	N passed, N failed, N skipped
//
// It exits non-zero when any test failed or never finished, any package
// failed to build or failed without a failed test, go test itself ended in
// error, no test ran, or (under CI=true, or with -ci) any test skipped that
// the allow-list in allow.go does not name. .ci/run runs the README's test
// command through it:
//
//	go run ./internal/cmd/testreport go test -race -json ./...
//
// With no command it reads `go test -json` output from standard input.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: testreport [-ci] [go test -json ... | < go-test-json-output]")
		fs.PrintDefaults()
	}
	strict := fs.Bool("ci", inCI(), "fail on any skip the allow-list does not name (default: true when CI is true)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	w := &lockedWriter{w: stdout}
	r := newReport(w, *strict)
	var runErr error
	if fs.NArg() == 0 {
		if err := r.read(stdin); err != nil {
			r.problem("%v", err)
		}
	} else {
		runErr = runCommand(r, w, fs.Args())
	}
	ok := r.finish(runErr)
	r.summary()
	if !ok {
		return 1
	}
	return 0
}

// runCommand runs the test command and reads its standard output as
// events; its standard error goes to the log as it comes.
func runCommand(r *report, w io.Writer, args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = w
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("testreport: %w", err)
	}
	if err := cmd.Start(); err != nil {
		r.problem("cannot start %s: %v", args[0], err)
		return nil
	}
	if err := r.read(out); err != nil {
		r.problem("%v", err)
		io.Copy(io.Discard, out)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

// inCI is CI set to a true value, as .ci/run and CI services set it.
func inCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// lockedWriter keeps the report's lines and the command's standard error
// from writing into each other.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
