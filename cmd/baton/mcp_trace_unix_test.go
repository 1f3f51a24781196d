//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/telemetry"
)

// baton mcp as a real process with an OTLP endpoint: each ask call is a
// trace of its own, from the one tracer the process set up, and the spans
// of the last call reach the receiver when the host closes the session.
func TestMCPAskIsTraced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts baton")
	}
	rcv, otlp := newOTLPReceiver(t)
	s := llmtest.NewServer(t, askScript())
	bin := buildBaton(t)
	root := t.TempDir()
	doc, err := os.ReadFile(exampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "incident.md"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--root", root)
	cmd.Env = append(noProviderEnv(t.TempDir(), os.Getenv("PATH")), "BATON_HOME="+t.TempDir(),
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+s.AnthropicBaseURL(),
		telemetry.EnvEndpoint+"="+otlp.URL, telemetry.EnvTracesEndpoint+"=", telemetry.EnvCaptureContent+"=")
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"task": "How long was the outage and why?", "documents": []string{"incident.md"}}})
		if err != nil || res.IsError {
			t.Fatalf("ask: %v %v", err, res)
		}
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	spans, _ := received(rcv)
	traces := map[string]int{}
	chats := 0
	for _, sp := range spans {
		switch {
		case sp.Name == "invoke_workflow ask":
			traces[string(sp.TraceId)]++
		case strAttr(sp, telemetry.AttrOperationName) == telemetry.OpChat:
			chats++
		}
	}
	if len(traces) != 2 || chats != s.Count() {
		t.Errorf("%d ask traces (want 2), %d chat spans for %d requests: %v", len(traces), chats, s.Count(), names(spans))
	}
}
