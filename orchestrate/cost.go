package orchestrate

import (
	"fmt"
	"slices"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/pricing"
)

// Cost is what a run cost in US dollars at the prices of a pricing.Table,
// phase by phase, from the usage the provider reported.
type Cost struct {
	Planner   float64 `json:"planner"`
	Subagents float64 `json:"subagents"`
	Synthesis float64 `json:"synthesis"`
	// Prices are the prices used, by model name, in dollars per million
	// tokens, so a reader can redo the sum.
	Prices map[string]pricing.Price `json:"prices"`
	// Source says where the prices came from (the built-in list prices and
	// their date, or a prices file).
	Source string `json:"source"`
}

// PriceWith sets r.CostUSD and r.Cost from r.Usage at t's prices. The
// planner phase is priced at the planner's model, the others at the run's
// model. When a phase that used tokens ran on a model t has no price, both
// stay unset and a warning says so: a cost of 0 would read as a price. A run
// whose provider reported no usage (a dry run, no call made) has no cost
// either. Usage decides, not ModelCalled: a run that failed after paid calls
// is priced whatever else the record says about it.
func (r *Record) PriceWith(t *pricing.Table) {
	r.CostUSD, r.Cost = nil, nil
	u := r.Usage
	if t == nil || u.Planner.Add(u.Subagents).Add(u.Synthesis) == (llm.Usage{}) {
		return
	}
	planner := r.PlannerModel
	if planner == "" {
		planner = r.Model
	}
	c := &Cost{Prices: map[string]pricing.Price{}, Source: t.Source()}
	var unknown []string
	phase := func(model string, u llm.Usage) float64 {
		if u == (llm.Usage{}) {
			return 0
		}
		p, ok := t.Lookup(r.Provider, model)
		if !ok {
			if !slices.Contains(unknown, model) {
				unknown = append(unknown, model)
			}
			return 0
		}
		c.Prices[model] = p
		return p.Cost(u)
	}
	c.Planner = phase(planner, r.Usage.Planner)
	c.Subagents = phase(r.Model, r.Usage.Subagents)
	c.Synthesis = phase(r.Model, r.Usage.Synthesis)
	for _, m := range unknown {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no price known for model %q, so the record has no cost_usd; give its prices in a prices file (--prices or %s)", m, pricing.EnvFile))
	}
	if len(unknown) > 0 {
		return
	}
	total := c.Planner + c.Subagents + c.Synthesis
	r.CostUSD, r.Cost = &total, c
}
