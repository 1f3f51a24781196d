package orchestrate_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
)

// The record had no cost in dollars. It is the usage of each phase at its
// own model's price: here the planner on Haiku 4.5 ($1 in, $5 out per
// million), sub-agents and synthesis on Sonnet 4.5 ($3 in, $15 out).
func TestRecordCostPricesEachPhaseAtItsModel(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := config(providers["anthropic"](t, s))
	cfg.Provider, cfg.ModelName, cfg.PlannerModel = "anthropic", "claude-sonnet-4-5", "claude-haiku-4-5"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	rec.PriceWith(pricing.Builtin())
	u := rec.Usage
	if u.Planner.InputTokens == 0 || u.Subagents.OutputTokens == 0 || u.Synthesis.InputTokens == 0 {
		t.Fatalf("the fake reported no usage for a phase: %+v", u)
	}
	if u.Total != s.TotalUsage() {
		t.Fatalf("record usage %+v, server saw %+v", u.Total, s.TotalUsage())
	}
	rest := u.Subagents.Add(u.Synthesis)
	want := (float64(u.Planner.InputTokens)*1+float64(u.Planner.OutputTokens)*5+
		float64(rest.InputTokens)*3+float64(rest.OutputTokens)*15)/1e6 +
		(float64(u.Planner.CacheReadInputTokens)*0.10+float64(u.Planner.CacheCreationInputTokens)*1.25+
			float64(rest.CacheReadInputTokens)*0.30+float64(rest.CacheCreationInputTokens)*3.75)/1e6
	if rec.CostUSD == nil || math.Abs(*rec.CostUSD-want) > 1e-12 {
		t.Fatalf("cost_usd = %v, want %v", rec.CostUSD, want)
	}
	c := rec.Cost
	if c == nil || math.Abs(c.Planner+c.Subagents+c.Synthesis-want) > 1e-12 || c.Planner <= 0 || len(c.Prices) != 2 {
		t.Errorf("cost by phase = %+v", c)
	}
	if !strings.Contains(c.Source, pricing.AsOf) {
		t.Errorf("source %q does not date the prices", c.Source)
	}
	for _, w := range rec.Warnings {
		if strings.Contains(w, "price") {
			t.Errorf("unexpected warning: %s", w)
		}
	}
}

// A model without a price leaves cost_usd null and says why; 0 would read
// as a price.
func TestRecordCostOfAnUnknownModelIsLeftOut(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	cfg := config(providers["openai"](t, s))
	cfg.Provider, cfg.ModelName = "openai", "my-finetune"
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	rec.PriceWith(pricing.Builtin())
	if rec.CostUSD != nil || rec.Cost != nil {
		t.Errorf("an unknown model was priced: %v %+v", *rec.CostUSD, rec.Cost)
	}
	n := 0
	for _, w := range rec.Warnings {
		if strings.Contains(w, `"my-finetune"`) && strings.Contains(w, "cost_usd") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one warning naming the model, got %q", rec.Warnings)
	}

	// A dry run called no model: no cost and nothing to warn about.
	dry := config(nil)
	dry.DryRun = true
	drec, err := orchestrate.Ask(context.Background(), dry)
	if err != nil {
		t.Fatal(err)
	}
	before := len(drec.Warnings)
	drec.PriceWith(pricing.Builtin())
	if drec.CostUSD != nil || len(drec.Warnings) != before {
		t.Errorf("dry run: cost %v, warnings %q", drec.CostUSD, drec.Warnings)
	}
}

// A run whose planner failed after paid calls is priced: the usage is what
// was paid, whatever model_called says.
func TestRecordCostOfAFailedRunIsItsPaidUsage(t *testing.T) {
	rec := &orchestrate.Record{Provider: "openai", Model: "gpt-4o-mini",
		Usage: orchestrate.PhaseUsage{Planner: llm.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000}}}
	rec.PriceWith(pricing.Builtin())
	// $0.15 and $0.60 per million.
	if rec.CostUSD == nil || math.Abs(*rec.CostUSD-(2*0.15+0.60)) > 1e-12 || rec.Cost.Planner != *rec.CostUSD {
		t.Errorf("cost_usd = %v, cost %+v; want 0.90 on the planner", rec.CostUSD, rec.Cost)
	}
}
