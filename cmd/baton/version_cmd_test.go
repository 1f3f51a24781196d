package main

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// Defect: there was no --version. Both spellings print the same line: the
// version and the Go version that built the binary.
func TestVersionCommandAndFlag(t *testing.T) {
	code, out, errOut := runBaton(t, "", "version")
	if code != exitOK || errOut != "" {
		t.Fatalf("version: exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "baton ") || !strings.Contains(out, runtime.Version()) || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("version printed %q; want one line with baton's version and %s", out, runtime.Version())
	}
	code, flagOut, errOut := runBaton(t, "", "--version")
	if code != exitOK || errOut != "" || flagOut != out {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q; want %q", code, flagOut, errOut, out)
	}
}

func TestVersionStringFromBuildInfo(t *testing.T) {
	released := &debug.BuildInfo{Main: debug.Module{Path: "github.com/baton-dev/baton", Version: "v1.2.3"}}
	if got := versionString(released); got != "v1.2.3" {
		t.Errorf("released build: %q", got)
	}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	if got := versionString(devel); got != "devel 0123456789ab (2026-12-01T10:00:00Z, modified)" {
		t.Errorf("devel build with VCS: %q", got)
	}
	bare := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if got := versionString(bare); got != "devel (no version control information)" {
		t.Errorf("devel build without VCS: %q", got)
	}
	if got := versionString(nil); !regexp.MustCompile(`^unknown`).MatchString(got) {
		t.Errorf("no build info: %q", got)
	}
}
