package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveMCP runs baton mcp with args in process and returns an SDK client
// session to it over its standard input and output.
func serveMCP(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), append([]string{"mcp"}, args...), inR, outW, &errOut)
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %s)", err, errOut.String())
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		if code := <-done; code != 0 {
			t.Errorf("baton mcp exited %d: %s", code, errOut.String())
		}
	})
	return cs
}

func ledgerArgs(ledger string) map[string]any {
	args := map[string]any{"phase": "read", "frozen_decisions": []string{}, "done_so_far": []any{},
		"artifacts": []string{}, "current_phase": "read", "next_step": "write", "open_tickets": []string{}}
	if ledger != "" {
		args["ledger"] = ledger
	}
	return args
}

// callText calls a tool and returns whether it failed and its text.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res.IsError, b.String()
}

// baton mcp --ledger and --state reach the server: the ledger and state
// file named are written, the defaults and other agents' instruction files
// are refused with a line that says how to declare a path, and nothing is
// made for a refused call.
func TestMCPLedgerAndStateFlags(t *testing.T) {
	root := t.TempDir()
	cs := serveMCP(t, "--root", root, "--ledger", "other.md", "--state", "work/cockpit.yaml")
	if failed, text := callText(t, cs, "ledger_append", ledgerArgs("other.md")); failed {
		t.Errorf("--ledger other.md: %s", text)
	}
	for _, p := range []string{"specs/ledger.md", "AGENTS.override.md", ".clinerules/x.md", "notes.md"} {
		if failed, text := callText(t, cs, "ledger_append", ledgerArgs(p)); !failed || !strings.Contains(text, p) || strings.Contains(text, "\n") {
			t.Errorf("ledger_append %s: failed %v, %q; want a one-line refusal", p, failed, text)
		}
	}
	_, text := callText(t, cs, "ledger_append", ledgerArgs("notes.md"))
	if !strings.Contains(text, "allowed: other.md") || !strings.Contains(text, "--ledger notes.md") {
		t.Errorf("refusal %q: want the allowed ledger and the flag that declares notes.md", text)
	}
	if failed, text := callText(t, cs, "state_set", map[string]any{"key": "a", "value": 1}); failed {
		t.Errorf("--state work/cockpit.yaml, no state argument: %s", text)
	}
	if failed, text := callText(t, cs, "state_set", map[string]any{"state": "specs/state.yaml", "key": "a", "value": 1}); !failed || !strings.Contains(text, "--state specs/state.yaml") {
		t.Errorf("state_set specs/state.yaml: failed %v, %q", failed, text)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "other.md work" {
		t.Errorf("the root holds %v; want only other.md and work", names)
	}
	data, _ := os.ReadFile(filepath.Join(root, "work", "cockpit.yaml"))
	if string(data) != "a: 1\n" {
		t.Errorf("work/cockpit.yaml: %q", data)
	}
}

// A path the server could never write is refused when baton mcp starts,
// in one line and with the usage exit status.
func TestMCPLedgerFlagChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--ledger", "../x.md"}, {"--ledger", "/tmp/x.md"}, {"--ledger", "notes.txt"},
		{"--ledger", ".git/ledger.md"}, {"--ledger", "AGENT.md"}, {"--state", "state.json"}, {"--state", "baton.yaml"},
	} {
		code, _, stderr := runBaton(t, "", append([]string{"mcp", "--root", t.TempDir()}, args...)...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, args[0]) {
			t.Errorf("mcp %v: exit %d, stderr %q; want exit %d and one line naming %s", args, code, stderr, exitUsage, args[0])
		}
	}
}
