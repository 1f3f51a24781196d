// Package pricing turns the usage a provider reported into US dollars.
//
// The built-in table holds the public list prices of Anthropic and OpenAI
// models, per million tokens, as those vendors published them on their
// pricing pages (anthropic.com/pricing, openai.com/api/pricing). The figures
// were taken from those pages as they stood in 2025 (see AsOf) and could not
// be checked again when the table was written, with no network: treat them
// as list prices of that date, not as your bill. Batch discounts, regional
// or priority tiers, long-context surcharges (Claude Sonnet 4 and 4.5 above
// 200k prompt tokens) and negotiated prices are not modelled. A prices file
// (Load) corrects or extends the table.
//
// A model the table does not know has no price: Lookup says so and callers
// leave the cost out rather than print 0 as if it were a price. Models served
// by Ollama run on the user's machine and cost nothing per token (Local).
package pricing

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/baton-dev/baton/llm"
)

// AsOf is when the built-in list prices were taken from the vendors' pages.
const AsOf = "2025 (list prices as published then; not re-verified since)"

// Price is what one model charges, in US dollars per million tokens. For
// OpenAI models CacheRead is the "cached input" price and CacheWrite is 0:
// OpenAI charges nothing extra for writing its cache.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// Cost is the price of u at p, in US dollars. llm.Usage counts fresh input,
// cache reads and cache writes apart, so each is charged at its own rate.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadInputTokens)*p.CacheRead +
		float64(u.CacheCreationInputTokens)*p.CacheWrite) / 1e6
}

// builtin is the list-price table (see the package comment for its date and
// limits). Cache write is Anthropic's five-minute cache write (1.25× input);
// cache read is 0.1× input for Anthropic, the "cached input" price for OpenAI.
var builtin = map[string]Price{
	// Anthropic.
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25},
	"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	"claude-3-5-sonnet": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	"claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"claude-3-opus":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30},
	// OpenAI.
	"gpt-5":         {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":    {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":    {Input: 0.05, Output: 0.40, CacheRead: 0.005},
	"gpt-4.1":       {Input: 2, Output: 8, CacheRead: 0.50},
	"gpt-4.1-mini":  {Input: 0.40, Output: 1.60, CacheRead: 0.10},
	"gpt-4.1-nano":  {Input: 0.10, Output: 0.40, CacheRead: 0.025},
	"gpt-4o":        {Input: 2.50, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":   {Input: 0.15, Output: 0.60, CacheRead: 0.075},
	"gpt-4-turbo":   {Input: 10, Output: 30},
	"gpt-4":         {Input: 30, Output: 60},
	"gpt-3.5-turbo": {Input: 0.50, Output: 1.50},
	"o1":            {Input: 15, Output: 60, CacheRead: 7.50},
	"o3":            {Input: 2, Output: 8, CacheRead: 0.50},
	"o3-mini":       {Input: 1.10, Output: 4.40, CacheRead: 0.55},
	"o4-mini":       {Input: 1.10, Output: 4.40, CacheRead: 0.275},
}

// Local is the provider whose models cost nothing per token: Ollama serves
// them on the user's own machine.
const Local = "ollama"

// Table is a price table: the built-in list prices, possibly corrected or
// extended by a prices file.
type Table struct {
	prices map[string]Price
	// source says where the prices came from, for the record.
	source string
}

// Builtin returns the built-in list-price table.
func Builtin() *Table {
	t := &Table{prices: make(map[string]Price, len(builtin)), source: "built-in list prices of " + AsOf}
	for k, v := range builtin {
		t.prices[k] = v
	}
	return t
}

// Source says where the table's prices came from.
func (t *Table) Source() string { return t.source }

// Models returns the names the table prices, sorted.
func (t *Table) Models() []string {
	names := make([]string, 0, len(t.prices))
	for k := range t.prices {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// snapshot is what may follow a priced name and still be the same model:
// a dated snapshot (claude-sonnet-4-20250514, gpt-4o-2024-08-06) or the
// "latest" alias. Nothing else is: claude-opus-4-5 is not claude-opus-4,
// and a longest-prefix rule would price it as one (at three times the price).
var snapshot = regexp.MustCompile(`^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// Lookup returns the price of model when provider serves it, and whether
// it is known. A model of the Local provider is free; any other model is
// known only by its exact name in the table, or that name followed by a
// snapshot date or -latest (case is ignored).
func (t *Table) Lookup(provider, model string) (Price, bool) {
	if provider == Local {
		return Price{}, true
	}
	m := strings.ToLower(strings.TrimSpace(model))
	if p, ok := t.prices[m]; ok {
		return p, true
	}
	best := ""
	for k := range t.prices {
		if len(k) > len(best) && strings.HasPrefix(m, k) && snapshot.MatchString(m[len(k):]) {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return t.prices[best], true
}

// Cost prices u for model; ok is false when the model has no price.
func (t *Table) Cost(provider, model string, u llm.Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// FormatUSD prints a cost for people: cents for most runs, more digits for
// the fractions of a cent a small run costs, so it never reads as $0.00.
func FormatUSD(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	default:
		return fmt.Sprintf("$%.2f", usd)
	}
}
