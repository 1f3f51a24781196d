// Package testdep is how a test says that something it needs from outside
// Go is missing: PostgreSQL, Chromium, the MCP Inspector, the Claude Code
// CLI, python3, a pty, git.
//
// Outside CI such a test skips, loudly, so a plain `go test ./...` works on
// a machine with Go alone. Under CI (the environment variable CI set to
// true, as .ci/run sets it) it fails instead: .ci/run installs every one of
// these, and a suite that skipped there is a suite nobody ran while the run
// stayed green.
package testdep

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// InCI reports whether the tests run under CI: CI holds a true value
// ("true", "1", ...), as .ci/run and the common CI services set it.
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Missing ends t because what it needs (a short name: "PostgreSQL") is
// not there, for the reason why. Under CI the test fails; elsewhere it
// skips with a line that starts "SKIPPED, NO" and names what is missing.
func Missing(t testing.TB, what, why string) {
	t.Helper()
	why = oneLine(why)
	if InCI() {
		t.Fatalf("%s is missing, and under CI=true a test that needs it fails instead of skipping: %s", what, why)
	}
	t.Skipf("SKIPPED, NO %s: %s", strings.ToUpper(what), why)
}

// LookPath returns the path of the program name on PATH, or ends t
// through Missing when there is none.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, fmt.Sprintf("%s is not on PATH: %v", name, err))
	}
	return p
}

// FromEnv returns the program that the environment variable name points
// at, as .ci/run exports the programs it installs (BATON_MCP_INSPECTOR,
// BATON_CLAUDE). When name is empty the test ends through Missing, with the
// reason in name+"_UNAVAILABLE" if .ci/run left one; when it names no file
// the test fails, in CI or not, since someone meant it to be there.
func FromEnv(t testing.TB, name, what string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		why := os.Getenv(name + "_UNAVAILABLE")
		if why == "" {
			why = name + " is not set (.ci/run installs " + what + " and sets it)"
		}
		Missing(t, what, why)
		return ""
	}
	if info, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", name, p, err)
	} else if info.IsDir() {
		t.Fatalf("%s=%s is a folder, not a program", name, p)
	}
	return p
}

// oneLine keeps a reason on the test's one skip or failure line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
