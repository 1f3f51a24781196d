package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Hosts start MCP servers with a reduced environment, so each shipped
// host file passes the provider keys to baton mcp: without them ask has no
// provider. .mcp.json and .cursor/mcp.json in their env block, each in the
// host's own syntax for a variable of its environment; Codex's in env_vars.
func TestHostFilesPassTheKeys(t *testing.T) {
	keys := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}
	for name, ref := range map[string]func(string) *regexp.Regexp{
		// Claude Code: ${VAR}, or ${VAR:-default}.
		".mcp.json": func(k string) *regexp.Regexp { return regexp.MustCompile(`^\$\{` + k + `(:-[^}]*)?\}$`) },
		// Cursor: ${env:VAR}.
		".cursor/mcp.json": func(k string) *regexp.Regexp { return regexp.MustCompile(`^\$\{env:` + k + `\}$`) },
	} {
		data, err := os.ReadFile(filepath.Join("../../examples/host", name))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			MCPServers map[string]struct {
				Env map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		env := f.MCPServers["baton"].Env
		for _, k := range keys {
			if v, ok := env[k]; !ok || !ref(k).MatchString(v) {
				t.Errorf("%s: env[%s] = %q, want the host's reference to %s", name, k, v, k)
			}
		}
		if name == ".mcp.json" && env["ANTHROPIC_API_KEY"] != "${ANTHROPIC_API_KEY}" {
			t.Errorf(".mcp.json: env.ANTHROPIC_API_KEY = %q, want ${ANTHROPIC_API_KEY}", env["ANTHROPIC_API_KEY"])
		}
	}

	data, err := os.ReadFile("../../examples/host/codex-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	var envVars []string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "env_vars = "); ok {
			if err := json.Unmarshal([]byte(v), &envVars); err != nil {
				t.Fatalf("codex-config.toml: env_vars %s: %v", v, err)
			}
		}
	}
	for _, k := range append(keys, "OPENAI_BASE_URL", "OLLAMA_HOST") {
		if !strings.Contains(" "+strings.Join(envVars, " ")+" ", " "+k+" ") {
			t.Errorf("codex-config.toml: env_vars %q does not forward %s", envVars, k)
		}
	}
}
