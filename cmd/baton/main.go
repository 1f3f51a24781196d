// Command baton runs LLM work so that every model call sees only the context it
// needs, and proves the savings with exact token accounting.
//
// The commands are thin: they parse flags, call the library packages and print.
// Each command lives in its own file and registers itself in init, so that
// adding a command never touches another command's file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes are a public contract; docs/reference/exit-codes.md lists them.
const (
	exitOK      = 0
	exitError   = 1 // the run failed: bad input, provider error, invalid plan
	exitUsage   = 2 // the command line was wrong
	exitPartial = 3 // the run finished, but some subtasks failed or a reply was cut at its token limit
	// exitInternal is a bug in baton (a panic), never the user's doing, so
	// it never shares the usage code 2 that Go's runtime gives a crash.
	exitInternal = 4
	// exitInterrupted is the shell's code for a command ended by Ctrl-C
	// (128+SIGINT); a SIGTERM, which cancels the same way, gets it too.
	exitInterrupted = 130
)

// commands holds the constructors of the top-level commands, filled by init
// functions in each command's file.
var commands []func() *cobra.Command

func register(c func() *cobra.Command) { commands = append(commands, c) }

// exitErr carries an exit code through cobra's error return. A nil err with a
// non-zero code means "already reported; just exit".
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// usageErrorf reports a wrong command line (exit 2).
func usageErrorf(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// withCode attaches an exit code to err.
func withCode(code int, err error) error { return &exitErr{code: code, err: err} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "baton",
		Short: "Run LLM work so every model call sees only the context it needs",
		Long: `baton runs LLM work so that every model call sees only the context it needs:
a planner reads the documents once, a deterministic assembler hands each
sub-agent just its slice, and every run records exactly how many tokens that
cost against sending the whole context to every sub-agent.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Version turns on cobra's --version flag; the template prints
		// the same line as `baton version`.
		Version: "-",
	}
	root.SetVersionTemplate(versionLine())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitErr{code: exitUsage, err: err}
	})
	cs := make([]*cobra.Command, 0, len(commands))
	for _, c := range commands {
		cs = append(cs, c())
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name() < cs[j].Name() })
	root.AddCommand(cs...)
	return root
}

// run executes the CLI with args and returns the process exit code. It is
// separate from main so tests can drive the real command tree.
//
// A panic in a command becomes one line and exit 4 (the stack only with
// BATON_DEBUG set); a command that fails after ctx was cancelled (Ctrl-C,
// SIGTERM) exits 130 whatever error the cancellation surfaced as.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		msg := strings.Join(strings.Fields(fmt.Sprint(r)), " ")
		if os.Getenv("BATON_DEBUG") != "" {
			fmt.Fprintf(stderr, "baton: internal error: %s\n%s", msg, debug.Stack())
		} else {
			fmt.Fprintf(stderr, "baton: internal error: %s (a bug in baton; BATON_DEBUG=1 prints where)\n", msg)
		}
		code = exitInternal
	}()
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code = exitError
	var ee *exitErr
	if errors.As(err, &ee) {
		code = ee.code
	} else if isCobraUsageError(err) {
		code = exitUsage
	}
	if ctx.Err() != nil {
		// Whatever the command made of the cancellation (an error, a
		// partial result), the user stopped it.
		code = exitInterrupted
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintf(stderr, "baton: %v\n", err)
	}
	return code
}

// isCobraUsageError recognises the argument errors cobra returns without a
// type of their own (unknown command, wrong number of arguments).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func main() {
	// Ctrl-C cancels the context: calls in flight are cancelled and the
	// commands exit cleanly with what they have recorded.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling so that a
		// second Ctrl-C ends a run that is slow to wind down.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
