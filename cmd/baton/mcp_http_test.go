package main

import (
	"strings"
	"testing"
)

// Bad flags and a missing token are refused before anything listens, with
// one line on stderr and exit 2.
func TestMCPHTTPRefusals(t *testing.T) {
	t.Setenv(tokenEnv, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:0"}, tokenEnv},
		{[]string{"mcp", "--http", ":0", "--max-result", "0"}, "--max-result 0"},
		{[]string{"mcp", "--max-result", "-5"}, "--max-result -5"},
		{[]string{"mcp", "--max-result", "4000"}, "at least 8192"},
		{[]string{"mcp", "--http", "8080"}, "HOST:PORT"},
	} {
		code, stdout, stderr := runBaton(t, "", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line naming %q", c.args, code, stderr, stdout, c.want)
		}
	}
}
