package main

import (
	"strings"
	"testing"
)

// Defect: a dry run without a provider said so twice, once on stderr and
// once on stdout. It now says it once, on stderr with the detail of what to
// set, and every line of both streams is a whole line.
func TestAskDryRunSaysNoProviderOnce(t *testing.T) {
	isolateEnv(t)
	code, out, errOut := runBaton(t, "", "ask", "--no-save", "--doc", exampleDoc, "What caused the outage?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	both := strings.ToLower(out + errOut)
	if n := strings.Count(both, "no model provider") + strings.Count(both, "no provider"); n != 1 {
		t.Errorf("no provider is said %d times, want once:\nstdout:\n%s\nstderr:\n%s", n, out, errOut)
	}
	for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
		if s != "" && !strings.HasSuffix(s, "\n") {
			t.Errorf("%s does not end with a newline: %q", name, s)
		}
	}
	if !strings.Contains(out, "saving:") || !strings.Contains(errOut, "dry run") {
		t.Errorf("stdout should hold the estimate and stderr why it is a dry run:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
