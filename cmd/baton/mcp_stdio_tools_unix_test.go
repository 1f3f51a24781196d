//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpBadCalls has, per tool, a call a host could get wrong (a path out of
// the root, an incomplete ledger entry, a malformed key, an unknown skill)
// and a word its one-line error must hold.
var mcpBadCalls = map[string]struct{ args, want string }{
	"outline":       {`{"documents":["../outside.md"]}`, "outside.md"},
	"slice":         {`{"document":"/etc/passwd"}`, "passwd"},
	"count_tokens":  {`{"files":["docs/missing.md"]}`, "missing.md"},
	"budget_check":  {`{"context_tokens":-5,"window":1000}`, "context_tokens"},
	"ledger_append": {`{"phase":"verify","current_phase":"verify"}`, "next_step"},
	"ledger_latest": {`{"ledger":"../ledger.md"}`, "ledger.md"},
	"ledger_lint":   {`{"run_log":"/etc/passwd"}`, "passwd"},
	"state_get":     {`{"key":"handoff..next_step"}`, "key"},
	"state_set":     {`{"state":"../state.yaml","key":"owner","value":"x"}`, "state.yaml"},
	"ask":           {`{"task":"What does the Team plan cost?","documents":["../docs"]}`, "docs"},
	"skills_list":   {`{"query":5}`, "query"},
	"skill_get":     {`{"name":"no-such-skill"}`, "no-such-skill"},
}

// baton mcp as a real subprocess over stdio, driven by the official SDK's
// client: every tool answers its fixture call with a structured result that
// passes the fixture's check, and every tool answers a bad call with an
// error result of one line, after which the server still serves. This
// needs no Inspector, so it runs wherever Go does.
func TestMCPEveryToolOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	bin := buildBaton(t)
	root := inspectorRoot(t)
	cmd := exec.Command(bin, "mcp", "--root", root)
	cmd.Env = noProviderEnv(t.TempDir(), os.Getenv("PATH"))
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	fixtures := mcpToolFixtures()
	for _, name := range mcpContractTools {
		fx, ok := fixtures[name]
		bad, hasBad := mcpBadCalls[name]
		if !ok || !hasBad {
			t.Errorf("tool %s: a fixture %v, a bad call %v; want both", name, ok, hasBad)
			continue
		}
		t.Run(name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(fx.args), &args); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			var out map[string]any
			data, _ := json.Marshal(res.StructuredContent)
			if res.IsError || json.Unmarshal(data, &out) != nil || out == nil {
				t.Fatalf("isError %v, structured %s, content %v", res.IsError, data, res.Content)
			}
			fx.check(t, root, out)

			var badArgs map[string]any
			if err := json.Unmarshal([]byte(bad.args), &badArgs); err != nil {
				t.Fatal(err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: badArgs})
			if err != nil {
				t.Fatalf("bad call: a protocol error, not a tool error: %v", err)
			}
			text := ""
			if len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			t.Logf("bad call %s: %s", bad.args, text)
			if !res.IsError || strings.Contains(text, "\n") || !strings.Contains(text, bad.want) {
				t.Errorf("bad call %s: isError %v, text %q; want one line naming %q", bad.args, res.IsError, text, bad.want)
			}
		})
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("the server stopped serving after the bad calls: %v", err)
	}
}
