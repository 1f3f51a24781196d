package testdep

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ending records how a call ended the test it was given: Fatalf and Skipf
// end the calling goroutine as the testing package's do, so the code after
// them never runs.
type ending struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (e *ending) Fatalf(format string, args ...any) {
	e.failed, e.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (e *ending) Skipf(format string, args ...any) {
	e.skipped, e.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// call runs fn with a recorder on its own goroutine and reports how it
// ended; returned is whether fn ran to its end.
func call(t *testing.T, fn func(testing.TB)) (e *ending, returned bool) {
	e = &ending{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(e)
		returned = true
	}()
	<-done
	return e, returned
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci              string
		failed, skipped bool
		wantIn          string
	}{
		{"true", true, false, "PostgreSQL is missing, and under CI=true"},
		{"1", true, false, "PostgreSQL is missing"},
		{"", false, true, "SKIPPED, NO POSTGRESQL: initdb not found"},
		{"false", false, true, "SKIPPED, NO POSTGRESQL"},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			e, returned := call(t, func(tb testing.TB) { Missing(tb, "PostgreSQL", "initdb not found\non PATH") })
			if returned || e.failed != tc.failed || e.skipped != tc.skipped {
				t.Fatalf("returned=%v failed=%v skipped=%v, want failed=%v skipped=%v", returned, e.failed, e.skipped, tc.failed, tc.skipped)
			}
			if !strings.Contains(e.msg, tc.wantIn) || strings.Contains(e.msg, "\n") || !strings.Contains(e.msg, "initdb not found on PATH") {
				t.Errorf("message %q, want one line with %q and the reason", e.msg, tc.wantIn)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	bin := t.TempDir()
	prog := filepath.Join(bin, "baton-testdep-prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("CI", "true")
	if runtime.GOOS != "windows" {
		e, returned := call(t, func(tb testing.TB) {
			if got := LookPath(tb, "baton-testdep-prog"); got != prog {
				tb.Errorf("LookPath = %q, want %q", got, prog)
			}
		})
		if !returned || e.failed || e.skipped {
			t.Errorf("a program on PATH: returned=%v %q", returned, e.msg)
		}
	}
	e, returned := call(t, func(tb testing.TB) { LookPath(tb, "baton-testdep-none") })
	if returned || !e.failed || !strings.Contains(e.msg, "baton-testdep-none is missing") {
		t.Errorf("a program not on PATH under CI: returned=%v failed=%v %q", returned, e.failed, e.msg)
	}
}

func TestFromEnv(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(prog, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value, unavailable, ci string
		failed, skipped              bool
		wantIn                       string
	}{
		{"set", prog, "", "true", false, false, ""},
		{"unset in CI", "", "", "true", true, false, "BATON_T_PROG is not set (.ci/run installs the program and sets it)"},
		{"unset with a reason", "", "npm registry unreachable", "", false, true, "SKIPPED, NO THE PROGRAM: npm registry unreachable"},
		{"no such file", prog + ".gone", "", "", true, false, "BATON_T_PROG=" + prog + ".gone"},
		{"a folder", filepath.Dir(prog), "", "", true, false, "is a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv("BATON_T_PROG", tc.value)
			t.Setenv("BATON_T_PROG_UNAVAILABLE", tc.unavailable)
			var got string
			e, returned := call(t, func(tb testing.TB) { got = FromEnv(tb, "BATON_T_PROG", "the program") })
			if e.failed != tc.failed || e.skipped != tc.skipped || returned == (tc.failed || tc.skipped) {
				t.Fatalf("returned=%v failed=%v skipped=%v %q", returned, e.failed, e.skipped, e.msg)
			}
			if returned && got != tc.value {
				t.Errorf("FromEnv = %q, want %q", got, tc.value)
			}
			if !strings.Contains(e.msg, tc.wantIn) {
				t.Errorf("message %q, want %q in it", e.msg, tc.wantIn)
			}
		})
	}
}
