package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
)

// The record had no cost in dollars and the summary line none either.
func TestAskRecordsAndPrintsTheCost(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "--model", "claude-sonnet-4-5", "task")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if rec.CostUSD == nil || *rec.CostUSD <= 0 {
		t.Fatalf("cost_usd = %v", rec.CostUSD)
	}
	if !strings.Contains(errOut, "at list prices\n") || !strings.Contains(errOut, "; cost $") {
		t.Errorf("summary does not print the cost:\n%s", errOut)
	}

	// A prices file at a dollar per prompt token makes the cost the
	// prompt tokens the provider reported: the file was used, phase by phase.
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	body := "models:\n  claude-sonnet-4-5: {input: 1000000, cache_read: 1000000, cache_write: 1000000, output: 0}\n"
	if err := os.WriteFile(prices, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BATON_PRICES", prices)
	before := s.TotalUsage()
	code, out, errOut = runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "--model", "claude-sonnet-4-5", "task")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec = decodeRecord(t, out)
	want := float64(s.TotalUsage().PromptTokens() - before.PromptTokens())
	if rec.CostUSD == nil || *rec.CostUSD != want || !strings.Contains(rec.Cost.Source, prices) {
		t.Errorf("with BATON_PRICES: cost_usd = %v (source %+v), want %v", rec.CostUSD, rec.Cost, want)
	}

	// A bad prices file is one line and exit 1, before any call is paid.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("models:\n  x: {inptu: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := s.Count()
	code, _, errOut = runBaton(t, "", "ask", "--doc", exampleDoc, "--prices", bad, "--no-save", "task")
	if code != exitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, bad) || s.Count() != n {
		t.Errorf("bad --prices: exit %d, %d new requests, stderr %q", code, s.Count()-n, errOut)
	}
}

// An unknown model: cost_usd is null, the summary says the cost is
// unknown and a warning says why; never $0.
func TestAskCostOfAnUnknownModel(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, askScript())
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "--model", "my-finetune", "task")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"cost_usd": null`) {
		t.Errorf("record does not say cost_usd null")
	}
	if !strings.Contains(errOut, "cost unknown") || !strings.Contains(errOut, `warning: no price known for model "my-finetune"`) || strings.Contains(errOut, "$0") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
