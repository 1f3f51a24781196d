package pricing

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/tokens"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCostChargesEachKindOfTokenAtItsRate(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 200_000, CacheReadInputTokens: 500_000, CacheCreationInputTokens: 100_000}
	// 3 + 0.2*15 + 0.5*0.30 + 0.1*3.75
	if got, want := p.Cost(u), 3+3+0.15+0.375; !near(got, want) {
		t.Errorf("cost = %v, want %v", got, want)
	}
}

func TestLookupMatchesSnapshotsNotOtherModels(t *testing.T) {
	tab := Builtin()
	cases := []struct {
		provider, model string
		want            Price
		known           bool
	}{
		{"anthropic", "claude-sonnet-4-20250514", builtin["claude-sonnet-4"], true},
		{"anthropic", "claude-sonnet-4-5", builtin["claude-sonnet-4-5"], true},
		{"anthropic", "Claude-Haiku-4-5-20251001", builtin["claude-haiku-4-5"], true},
		{"anthropic", "claude-3-5-sonnet-latest", builtin["claude-3-5-sonnet"], true},
		{"openai", "gpt-4o-2024-08-06", builtin["gpt-4o"], true},
		{"openai", "gpt-4o-mini", builtin["gpt-4o-mini"], true},
		// A newer model is not the older one it starts with.
		{"anthropic", "claude-opus-4-7", Price{}, false},
		{"openai", "gpt-4o-audio-preview", Price{}, false},
		{"openai", "my-finetune", Price{}, false},
		// Ollama runs on the user's machine.
		{"ollama", "llama3.1:8b", Price{}, true},
	}
	for _, c := range cases {
		got, ok := tab.Lookup(c.provider, c.model)
		if ok != c.known || got != c.want {
			t.Errorf("Lookup(%q, %q) = %+v, %v; want %+v, %v", c.provider, c.model, got, ok, c.want, c.known)
		}
	}
	if _, ok := tab.Cost("openai", "my-finetune", llm.Usage{InputTokens: 10}); ok {
		t.Error("an unknown model was priced")
	}
}

// Every hosted model whose window package tokens knows has a price, so a
// run on any of them records its cost.
func TestEveryPricedModelHasAKnownWindow(t *testing.T) {
	for _, m := range Builtin().Models() {
		if _, known := tokens.Window(m, 0); !known {
			t.Errorf("%s is priced but tokens.Window does not know it", m)
		}
	}
	for _, m := range []string{"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", "gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-4", "gpt-3.5-turbo", "gpt-5", "o1", "o3", "o4-mini"} {
		if _, ok := Builtin().Lookup("", m); !ok {
			t.Errorf("%s has a window but no price", m)
		}
	}
}

func TestLoadCorrectsAndExtendsTheTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.yaml")
	body := "models:\n  gpt-4o: {input: 1, output: 2}\n  My-Gateway-Model:\n    input: 0.5\n    output: 1.5\n    cache_read: 0.05\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := tab.Lookup("openai", "gpt-4o-2024-08-06"); p != (Price{Input: 1, Output: 2}) {
		t.Errorf("gpt-4o not corrected: %+v", p)
	}
	if p, ok := tab.Lookup("openai", "my-gateway-model"); !ok || p.CacheRead != 0.05 {
		t.Errorf("added model: %+v, %v", p, ok)
	}
	if p, _ := tab.Lookup("anthropic", "claude-sonnet-4-5"); p != builtin["claude-sonnet-4-5"] {
		t.Errorf("a model the file does not name changed: %+v", p)
	}
	if !strings.Contains(tab.Source(), path) {
		t.Errorf("source %q does not name the file", tab.Source())
	}
	if Builtin().prices["gpt-4o"] != builtin["gpt-4o"] {
		t.Error("Load changed the built-in table")
	}
}

func TestLoadRefusesBadFilesInOneLine(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field": "models:\n  m: {input: 1, outptu: 2}\n",
		"negative":      "models:\n  m: {input: -1}\n",
		"not a number":  "models:\n  m: {input: cheap}\n",
		"empty":         "# nothing\n",
		"wrong shape":   "- a\n- b\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !errors.Is(err, ErrPrices) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v; want one line naming %s", name, err, path)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, ErrPrices) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFormatUSD(t *testing.T) {
	for usd, want := range map[float64]string{0: "$0", 0.00001: "<$0.0001", 0.00042: "$0.0004", 0.5: "$0.50", 12.345: "$12.35"} {
		if got := FormatUSD(usd); got != want {
			t.Errorf("FormatUSD(%v) = %q, want %q", usd, got, want)
		}
	}
}
