package main

import (
	"runtime"
	"slices"
	"strings"
)

// module is baton's import path, the prefix of every package below.
const module = "github.com/baton-dev/baton/"

// allowance is one skip that may happen under CI without failing it.
type allowance struct {
	// Package is the import path without the module prefix ("" for any).
	Package string
	// Test is the exact test name, subtests included ("" for any).
	Test string
	// Reason must appear in the test's output: the skip's own message.
	Reason string
	// NotOn lists the platforms (GOOS) where this skip cannot be right,
	// so there it is not allowed.
	NotOn []string
	// Why says why the skip is not a suite that CI failed to run.
	Why string
}

// allowList is every skip CI accepts. Everything else that skips under
// CI=true fails the run: a dependency CI did not install, a test left
// behind a flag, a check that quietly stopped running. Keep each entry
// exact and say why; docs/development.md lists them too.
var allowList = []allowance{
	// Helper processes: a test that re-runs the test binary as a child
	// selects one of these by name and an environment variable; run on
	// their own they are entry points with nothing to do.
	{Package: "internal/filelock", Test: "TestLockChild", Reason: "started only by TestLockAcrossProcesses",
		Why: "the child process of TestLockAcrossProcesses"},
	{Package: "history", Test: "TestWriterProcess", Reason: "run by TestTwoProcesses",
		Why: "the child process of TestTwoProcesses"},
	{Package: "runlog", Test: "TestKillHelper", Reason: "helper process for TestSurvivesSIGKILL",
		Why: "the child process of TestSurvivesSIGKILL"},
	{Package: "state", Test: "TestHelperWriter", Reason: "only runs as a helper process",
		Why: "the child process of TestUpdateConcurrentProcesses"},
	// Conformance suites that ask for what one backend cannot promise.
	{Package: "internal/localengine", Test: "TestContractInMemory/SurvivesTheProcess", Reason: "keeps its records only for the engine's life",
		Why: "the in-memory engine keeps nothing across processes by design; the on-disk and dbos engines run this case"},
	// Conditions of the machine, not of baton.
	{Package: "internal/pgtest", Test: "TestStartAsRootWithAClosedTMPDIR", Reason: "only root runs the server as another user",
		Why: "a root-only case; CI normally runs as root and then runs it"},
	{Package: "internal/workspace", Test: "TestNoEscapeUnderSwapRace", Reason: "renameat2 RENAME_EXCHANGE unavailable",
		Why: "a file system without atomic exchange cannot stage the race"},
	// Platforms without symlinks, POSIX shells or Linux's /proc and /dev.
	{Reason: "symlink", NotOn: []string{"linux", "darwin"}, Why: "Windows without developer mode cannot make symlinks"},
	{Reason: "the scripted agent is a POSIX sh script", NotOn: []string{"linux", "darwin"}, Why: "Windows has no sh"},
	{Reason: "no /dev/zero here", NotOn: []string{"linux", "darwin"}, Why: "Windows has no /dev/zero"},
	{Reason: "no /proc/self/fd here", NotOn: []string{"linux"}, Why: "only Linux has /proc/self/fd"},
	{Reason: "this platform finds a cache folder without HOME", NotOn: []string{"linux"}, Why: "macOS and Windows find the cache folder elsewhere"},
	{Reason: "mkfifo", NotOn: []string{"linux", "darwin"}, Why: "Windows has no named pipes in the file system"},
}

// allowed returns why the skip of test in pkg (full import path) with
// output out is allowed, or "" when it is not.
func allowed(pkg, test, out string) string {
	rel := strings.TrimPrefix(pkg, module)
	for _, a := range allowList {
		if (a.Package != "" && a.Package != rel) || (a.Test != "" && a.Test != test) ||
			!strings.Contains(out, a.Reason) || slices.Contains(a.NotOn, runtime.GOOS) {
			continue
		}
		return a.Why
	}
	return ""
}
