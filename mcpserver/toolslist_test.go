package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestToolsListGolden holds the server's tools, their descriptions, their
// annotations and their input and output schemas to a golden file, so that
// a tool's contract, which hosts depend on, cannot change unnoticed. After
// a change on purpose: go test ./mcpserver/ -run TestToolsListGolden -update
func TestToolsListGolden(t *testing.T) {
	cs := connect(t)
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	got, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools_list.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/list differs from %s; if the change is meant, run the test with -update and review the diff.\ngot:\n%s", golden, got)
	}
}
