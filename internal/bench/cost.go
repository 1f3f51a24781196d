package bench

import (
	"fmt"

	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/tokens"
)

// Prices is a price table in dollars per million tokens. Cache writes and
// reads are priced relative to base input, as Anthropic prices them.
type Prices struct {
	Name       string
	Input      float64
	Output     float64
	CacheWrite float64 // × Input
	CacheRead  float64 // × Input
}

// DefaultPrices is a Sonnet-class price table. Every cost below is linear in
// these figures, so ratios hold for any table with the same cache multipliers.
var DefaultPrices = Prices{Name: "$3 / MTok input, $15 / MTok output", Input: 3, Output: 15, CacheWrite: 1.25, CacheRead: 0.1}

type costLine struct {
	fresh, write, read, out int64
}

func (p Prices) dollars(c costLine) float64 {
	return (float64(c.fresh)*p.Input + float64(c.write)*p.Input*p.CacheWrite + float64(c.read)*p.Input*p.CacheRead + float64(c.out)*p.Output) / 1e6
}

// batonCached prices the baton run's requests as the provider would with
// caching on: a request whose system prompt carried cache_control (baton
// marks it when it reaches the model's minimum cacheable length) writes that
// prefix the first time and reads it afterwards; everything else is fresh.
// Parallel calls are taken to find the cache warm, the best case.
func batonCached(e Efficiency, c *tokens.Counter) (costLine, int) {
	var cl costLine
	seen := map[string]bool{}
	marked := 0
	for _, r := range e.Requests {
		if r.Status != 200 {
			continue
		}
		prompt := r.Usage.PromptTokens()
		cl.out += r.Usage.OutputTokens
		if !r.SystemCacheControl {
			cl.fresh += prompt
			continue
		}
		marked++
		sys := int64(c.Count(r.System))
		if seen[r.System] {
			cl.read += sys
		} else {
			cl.write += sys
			seen[r.System] = true
		}
		cl.fresh += prompt - sys
	}
	return cl, marked
}

// CostSection prices the token efficiency runs.
func CostSection(es []Efficiency) Section {
	p := DefaultPrices
	// The cached prefix is priced in the fake's units, like the usage it
	// is taken from.
	c, err := tokens.New(ProviderEncoding)
	if err != nil {
		c = tokens.ForModel(ModelName)
	}
	tb := Table{
		Title:  "Cost of the corpus tasks",
		Header: []string{"task", "naive", "naive, context cached (best case)", "baton", "baton, caching on", "baton/naive", "baton cached / naive cached"},
	}
	var tn, tnc, tbt, tbc float64
	marked := 0
	for _, e := range es {
		rec := e.Records[VariantBaton]
		u := rec.Usage.Total
		out := u.OutputTokens
		delegated := e.Subtasks - e.Self
		// Naive sends the same prompts except that each delegated one
		// carries the whole context; its replies are the same.
		naive := costLine{fresh: int64(e.Naive), out: out}
		// Best case for naive with caching: the context is one shared
		// prefix, written once by the planner and read by every sub-agent.
		ctx := int64(e.Context)
		naiveCached := costLine{fresh: int64(e.Naive) - ctx*int64(delegated+1), write: ctx, read: ctx * int64(delegated), out: out}
		baton := costLine{fresh: u.PromptTokens(), out: out}
		bc, m := batonCached(e, c)
		marked += m
		dn, dnc, db, dbc := p.dollars(naive), p.dollars(naiveCached), p.dollars(baton), p.dollars(bc)
		tn, tnc, tbt, tbc = tn+dn, tnc+dnc, tbt+db, tbc+dbc
		tb.Rows = append(tb.Rows, []string{e.ID, usd(dn), usd(dnc), usd(db), usd(dbc), fmt.Sprintf("%.3f", db/dn), fmt.Sprintf("%.3f", dbc/dnc)})
	}
	tb.Rows = append(tb.Rows, []string{"**total**", usd(tn), usd(tnc), usd(tbt), usd(tbc), fmt.Sprintf("**%.3f**", tbt/tn), fmt.Sprintf("%.3f", tbc/tnc)})
	s := Section{
		Title: "5. Cost",
		Intro: fmt.Sprintf("Priced from the usage the fake reported for the full-planner runs of benchmark 1 (input and output counted with %s, as a provider's own tokenizer would), "+
			"at %s; cache writes at %.2f× and cache reads at %.1f× the input price. Naive is priced from orchestrate's naive count (%s) with the same replies.", ProviderEncoding, p.Name, p.CacheWrite, p.CacheRead, tokensEncoding()),
		Tables: []Table{tb},
		Notes: []string{
			fmt.Sprintf("*baton, caching on* prices what baton actually marks for caching: the system prompt, when it reaches %d tokens for %s. %d requests in these runs carried the marker; the skill and synthesis prompts are shorter than the minimum, so caching changes nothing for baton here.",
				anthropic.MinCacheableTokens(ModelName), ModelName, marked),
			"*naive, context cached* is a modelled best case, not a measurement: the whole context as one cached prefix that the planner writes once and every naive sub-agent reads at the cache price. " +
				"It is the fair competitor to baton once caching is on; baton's slices differ per subtask, so they cannot share such a prefix.",
		},
	}
	return s
}

func usd(d float64) string { return fmt.Sprintf("$%.4f", d) }
