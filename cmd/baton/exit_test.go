package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The commands these tests need exist only in the test binary, hidden, so
// the exit codes are checked through run() and the real root command.
func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use: "test-panic", Hidden: true,
			RunE: func(_ *cobra.Command, args []string) error {
				var none []string
				return errors.New(none[len(args)]) // a real runtime panic: index out of range
			},
		}
	})
	register(func() *cobra.Command {
		return &cobra.Command{
			Use: "test-panic-multiline", Hidden: true,
			RunE: func(*cobra.Command, []string) error {
				panic("first line\nsecond line")
			},
		}
	})
	register(func() *cobra.Command {
		// Waits for the context, then fails the way ask and run do when
		// cancelled: an error wrapping context.Canceled, or a code of its
		// own.
		return &cobra.Command{
			Use: "test-wait", Hidden: true, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if args[0] == "inner" {
					// A cancellation inside the command, not the user's.
					return fmt.Errorf("lookup: %w", context.Canceled)
				}
				<-cmd.Context().Done()
				switch args[0] {
				case "wrapped":
					return fmt.Errorf("step 2: %w", cmd.Context().Err())
				case "coded":
					return withCode(exitError, errors.New("cancelled; the run record keeps what finished"))
				default:
					return &exitErr{code: exitPartial}
				}
			},
		}
	})
}

func TestPanicIsAnInternalErrorOnOneLine(t *testing.T) {
	t.Setenv("BATON_DEBUG", "")
	for _, cmd := range []string{"test-panic", "test-panic-multiline"} {
		code, out, errOut := runBaton(t, "", cmd)
		if code != exitInternal {
			t.Errorf("%s: exit %d, want %d", cmd, code, exitInternal)
		}
		if out != "" {
			t.Errorf("%s: stdout %q", cmd, out)
		}
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "baton: internal error: ") {
			t.Errorf("%s: stderr is not one internal-error line:\n%s", cmd, errOut)
		}
		if strings.Contains(errOut, "goroutine ") {
			t.Errorf("%s: stack printed without BATON_DEBUG:\n%s", cmd, errOut)
		}
	}
	code, _, errOut := runBaton(t, "", "test-panic")
	if !strings.Contains(errOut, "index out of range") {
		t.Errorf("the panic's own message is missing: %q (exit %d)", errOut, code)
	}

	t.Setenv("BATON_DEBUG", "1")
	code, _, errOut = runBaton(t, "", "test-panic")
	if code != exitInternal || !strings.Contains(errOut, "goroutine ") || !strings.Contains(errOut, "exit_test.go") {
		t.Errorf("with BATON_DEBUG: exit %d, want %d and a stack naming the panicking file:\n%s", code, exitInternal, errOut)
	}
}

func TestCancelledCommandExits130(t *testing.T) {
	for _, how := range []string{"wrapped", "coded", "partial"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut strings.Builder
		code := run(ctx, []string{"test-wait", how}, strings.NewReader(""), &out, &errOut)
		if code != exitInterrupted {
			t.Errorf("%s: exit %d after cancel, want %d; stderr %q", how, code, exitInterrupted, errOut.String())
		}
		if n := strings.Count(errOut.String(), "\n"); n > 1 {
			t.Errorf("%s: stderr has %d lines:\n%s", how, n, errOut.String())
		}
	}
	// A cancellation the user did not ask for is an ordinary failure.
	code, _, errOut := runBaton(t, "", "test-wait", "inner")
	if code != exitError || errOut != "baton: lookup: context canceled\n" {
		t.Errorf("inner cancellation: exit %d, stderr %q; want %d", code, errOut, exitError)
	}
}

// A document that would have a command read without end is refused on one
// line with exit 1, not read until the runtime dies with exit 2.
func TestDeviceDocumentExits1(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	isolateEnv(t)
	for _, args := range [][]string{
		{"ask", "--dry-run", "--no-save", "--doc", "/dev/zero", "task"},
		{"slice", "--doc", "/dev/zero", "--outline"},
		{"slice", "--doc", "main.go", "--doc", "/dev/zero", "--outline"},
		{"tokens", "/dev/zero"},
	} {
		code, _, errOut := runBaton(t, "", args...)
		if code != exitError || !strings.Contains(errOut, "/dev/zero: not a regular file (a device)") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
