package pricing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
)

// The prices file in the user's config folder corrects the table when no
// flag or $BATON_PRICES names another; $BATON_PRICES wins over it; without
// either the built-in table is used as it is.
func TestDefaultPathPrefersTheEnvironmentThenTheConfigFolder(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg) // macOS reads ~/Library/Application Support
	none := func(string) string { return "" }
	if p := DefaultPath(none); p != "" {
		t.Fatalf("DefaultPath with no file = %q, want \"\"", p)
	}
	if err := os.MkdirAll(filepath.Dir(ConfigFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ConfigFile(), []byte("models:\n  house-model: {input: 2, output: 4}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := DefaultPath(none); p != ConfigFile() {
		t.Fatalf("DefaultPath = %q, want the config folder's %q", p, ConfigFile())
	}
	tab, err := LoadDefault(none)
	if err != nil {
		t.Fatal(err)
	}
	usd, ok := tab.Cost("", "house-model", llm.Usage{InputTokens: 1_000_000, OutputTokens: 500_000})
	if !ok || usd != 4 || !strings.Contains(tab.Source(), ConfigFile()) {
		t.Errorf("cost %v %v, source %q; want $4 from %s", usd, ok, tab.Source(), ConfigFile())
	}
	env := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(env, []byte("models:\n  house-model: {input: 1, output: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := DefaultPath(func(k string) string {
		if k == EnvFile {
			return env
		}
		return ""
	}); p != env {
		t.Errorf("DefaultPath with $%s set = %q, want %q", EnvFile, p, env)
	}
}
