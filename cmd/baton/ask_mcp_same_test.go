package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/mcpserver"
)

// baton ask --json and the MCP ask tool are two front ends of one entry
// point: for the same request against the same fake they give the same
// record, apart from the run's ID and times. A 429 on one sub-agent is
// retried by both.
func TestAskAndMCPAskGiveTheSameRecord(t *testing.T) {
	isolateEnv(t)
	// Each run meets the same script: one 429, then answers.
	script := func() []llmtest.Rule {
		return []llmtest.Rule{llmtest.Sequence(llmtest.RateLimit(0)).WhenContains("Your subtask: Explain the retry storm").Limit(1), askScript()}
	}
	srv := llmtest.NewServer(t, script()...)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", srv.AnthropicBaseURL())
	root := t.TempDir()
	data, err := os.ReadFile(exampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "incident.md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	const task = "What caused the outage and what should change?"

	code, stdout, stderr := runDefault(t, "", "ask", "--doc", "incident.md", "--planner", "full", "--planner-model", "claude-opus-4-1",
		"--window", "150000", "--concurrency", "1", "--fail-fast", "--json", "--no-save", task)
	if code != 0 {
		t.Fatalf("baton ask: exit %d\n%s", code, stderr)
	}
	cli := normalRecord(t, stdout)

	srv.SetRules(script()...)
	s, err := mcpserver.New(mcpserver.Config{Root: root, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.SDK().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{
		"task": task, "documents": []string{"incident.md"}, "planner": "full", "planner_model": "claude-opus-4-1",
		"window": 150000, "concurrency": 1, "fail_fast": true}})
	if err != nil || res.IsError {
		t.Fatalf("MCP ask: %v %+v", err, res)
	}
	var out mcpserver.AskOut
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(out.Record)))
	if err != nil {
		t.Fatalf("the MCP ask's record: %v", err)
	}
	viaMCP := normalRecord(t, string(saved))

	if diff := cmp.Diff(cli, viaMCP); diff != "" {
		t.Errorf("baton ask --json and MCP ask differ (-cli +mcp):\n%s", diff)
	}
	if out.PlannerModel != "claude-opus-4-1" || out.Usage.Total.InputTokens == 0 {
		t.Errorf("the tool's result: planner model %q, usage %+v; want the record's", out.PlannerModel, out.Usage)
	}
	if cli["status"] != "ok" || cli["planner_model"] != "claude-opus-4-1" {
		t.Errorf("status %v, planner model %v: want ok (the 429 retried) and the model asked for", cli["status"], cli["planner_model"])
	}
}

// normalRecord is a record as JSON values, without what differs between
// two runs of the same request: the ID and the times.
func normalRecord(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("record is not JSON: %v\n%s", err, data)
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "id" || strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_ms") || strings.Contains(k, "duration") {
					delete(v, k)
					continue
				}
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(m)
	return m
}
