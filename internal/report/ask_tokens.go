package report

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
)

// phaseTokens is one phase's counted input tokens, as the record has them.
type phaseTokens struct {
	phase, label, colour string
	tokens               int
}

// runPhases splits the run's counted input by phase. Map/reduce is the
// prompt tokens of the subtasks that ran by map-reduce (their
// prompt_tokens sum all those requests); the sub-agents' figure is the
// rest of subagent_input_tokens.
func runPhases(a orchestrate.Accounting, subs []orchestrate.SubtaskResult) []phaseTokens {
	mr := 0
	for _, s := range subs {
		if s.MapCalls > 0 || s.ReduceCalls > 0 {
			mr += s.PromptTokens
		}
	}
	mr = min(mr, max(a.SubagentInputTokens, 0))
	return []phaseTokens{
		{"planner", "Planner", "#1f5fbf", a.PlannerInputTokens},
		{"subagents", "Sub-agents", "#2e7d32", a.SubagentInputTokens - mr},
		{"mapreduce", "Map/reduce", "#8e44ad", mr},
		{"synthesis", "Synthesis", "#e8a317", a.SynthesisInputTokens},
	}
}

// askTokens is the input tokens of each phase next to the two baselines, as
// a chart and as a table, with the savings and the cost.
func askTokens(rec *orchestrate.Record) Section {
	var b strings.Builder
	a := rec.Accounting
	phases := runPhases(a, rec.Subtasks)
	if a.Estimate {
		b.WriteString("<p>Estimates: no model was called, every figure is a local count, and the synthesis (which depends on the answers) is in neither side.</p>")
	}
	scale := max(a.OrchestratedInputTokens, a.NaiveInputTokens, a.SingleCallInputTokens)
	const w, labelW, barH, rowH = 1100, 250, 26, 40
	svg := NewSVG(w, 3*rowH+30, "Input tokens by phase",
		fmt.Sprintf("This run sent %d input tokens (planner %d, sub-agents %d, map/reduce %d, synthesis %d); the naive baseline %d; one single call %d.",
			a.OrchestratedInputTokens, phases[0].tokens, phases[1].tokens, phases[2].tokens, phases[3].tokens, a.NaiveInputTokens, a.SingleCallInputTokens))
	barW := float64(w - labelW - 110)
	px := func(n int) float64 {
		if scale <= 0 || n <= 0 {
			return 0
		}
		return float64(n) / float64(scale) * barW
	}
	y := 8.0
	svg.Text(labelW-8, y+17, "end", "This run", nil)
	x := float64(labelW)
	for _, p := range phases {
		tip := fmt.Sprintf("%s: %s input tokens", p.label, Thousands(int64(p.tokens)))
		svg.Rect(x, y, px(p.tokens), barH, p.colour, tip, Attrs{{"class", "bar"}, {"data-series", "run"}, {"data-phase", p.phase}, {"data-tokens", itoa(p.tokens)}})
		x += px(p.tokens)
	}
	svg.Text(x+6, y+17, "start", Thousands(int64(a.OrchestratedInputTokens)), nil)
	y += rowH
	baseline := func(series, label string, n int, fits bool) {
		svg.Text(labelW-8, y+17, "end", label, nil)
		a := Attrs{{"class", "bar"}, {"data-series", series}, {"data-tokens", itoa(n)}}
		fill := "#9e9e9e"
		if !fits {
			a = append(a, [2]string{"stroke", "#b3261e"}, [2]string{"stroke-dasharray", "6 3"})
			fill = "#e6e6e6"
		}
		svg.Rect(labelW, y, px(n), barH, fill, fmt.Sprintf("%s: %s input tokens", label, Thousands(int64(n))), a)
		end := Thousands(int64(n))
		if !fits {
			end += " (does not fit)"
		}
		svg.Text(labelW+px(n)+6, y+17, "start", end, nil)
		y += rowH
	}
	baseline("naive", "Naive baseline", a.NaiveInputTokens, true)
	fits := a.SingleCallFits == nil || *a.SingleCallFits
	baseline("single_call", "One call, whole context", a.SingleCallInputTokens, fits)
	// A legend in words and position, so the colours need not be told apart.
	lx := float64(labelW)
	for _, p := range phases {
		svg.Rect(lx, y+2, 12, 12, p.colour, "", nil)
		svg.Text(lx+16, y+12, "start", p.label, nil)
		lx += 130
	}
	b.WriteString(svg.String())

	rows := [][]cell{}
	for _, p := range phases {
		rows = append(rows, []cell{txt(p.label), num(int64(p.tokens))})
	}
	rows = append(rows,
		[]cell{txt("This run, all phases"), num(int64(a.OrchestratedInputTokens))},
		[]cell{txt("Naive baseline"), num(int64(a.NaiveInputTokens))},
		[]cell{txt("Single-call baseline"), num(int64(a.SingleCallInputTokens))})
	b.WriteString(htmlTable(fmt.Sprintf("Input tokens counted locally (%s), the chart's figures", orEmpty(a.Counter)), []string{"Phase", "Input tokens"}, rows))

	fmt.Fprintf(&b, "<p>Against the naive baseline (savings_ratio) this run %s.", saving(a.SavingsRatio))
	switch {
	case a.SingleCallSavingsRatio != nil:
		fmt.Fprintf(&b, " Against one call with the whole context (single_call_savings_ratio) it %s.", saving(*a.SingleCallSavingsRatio))
	case a.Estimate:
		b.WriteString(" The saving against one call is not stated for an estimate: its synthesis is not counted yet.")
	}
	if a.SingleCallFits != nil && !*a.SingleCallFits {
		fmt.Fprintf(&b, " One call would not fit the model's window of %s tokens.", Thousands(int64(a.SingleCallWindow)))
	}
	b.WriteString("</p>")
	if a.MapCalls > 0 || a.ReduceCalls > 0 {
		fmt.Fprintf(&b, "<p>Map/reduce: %d map calls and %d reduce calls.</p>", a.MapCalls, a.ReduceCalls)
	}
	b.WriteString(usageTable(rec))
	if c := a.Calibration; c.Calls > 0 {
		fmt.Fprintf(&b, "<p>Calibration: over %d calls the provider reported %s prompt tokens for %s counted (ratio %.3f).</p>",
			c.Calls, Thousands(c.Reported), Thousands(c.Counted), c.Ratio)
	}
	return Section{ID: "tokens", Title: "Tokens and cost", Body: b.String()}
}

// usageTable is what the provider reported per phase, and its cost.
func usageTable(rec *orchestrate.Record) string {
	u := rec.Usage
	if u.Total == (llm.Usage{}) {
		u.Total = u.Planner.Add(u.Subagents).Add(u.Synthesis)
	}
	var b strings.Builder
	if u.Total == (llm.Usage{}) {
		b.WriteString("<p>No provider usage: no model was called, so there is no cost.</p>")
		return b.String()
	}
	cost := func(f func(c *orchestrate.Cost) float64) cell {
		if rec.Cost == nil {
			return txt("–")
		}
		return cell{html: Esc(dollars(f(rec.Cost))), class: "num"}
	}
	row := func(name string, u llm.Usage, c cell) []cell {
		return []cell{txt(name), num(u.InputTokens), num(u.OutputTokens), num(u.CacheReadInputTokens), num(u.CacheCreationInputTokens), c}
	}
	total := txt("–")
	if rec.CostUSD != nil {
		total = cell{html: Esc(dollars(*rec.CostUSD)), class: "num"}
	}
	rows := [][]cell{
		row("Planner", u.Planner, cost(func(c *orchestrate.Cost) float64 { return c.Planner })),
		row("Sub-agents (map/reduce included)", u.Subagents, cost(func(c *orchestrate.Cost) float64 { return c.Subagents })),
		row("Synthesis", u.Synthesis, cost(func(c *orchestrate.Cost) float64 { return c.Synthesis })),
		row("Total", u.Total, total),
	}
	b.WriteString(htmlTable("What the provider reported, and its cost", []string{"Phase", "Input", "Output", "Cache read", "Cache write", "Cost"}, rows))
	switch {
	case rec.CostUSD != nil && rec.Cost != nil:
		fmt.Fprintf(&b, "<p>Cost: <strong>%s</strong> at the prices of %s.</p>", Esc(dollars(*rec.CostUSD)), Esc(orEmpty(rec.Cost.Source)))
	case rec.CostUSD != nil:
		fmt.Fprintf(&b, "<p>Cost: <strong>%s</strong>.</p>", Esc(dollars(*rec.CostUSD)))
	default:
		b.WriteString("<p>No cost: the model has no known price.</p>")
	}
	return b.String()
}

// saving states a savings ratio; a negative one is more tokens, said so.
func saving(r float64) string {
	if r < 0 {
		return "sends <strong>" + percent(-r) + " more</strong> input tokens"
	}
	return "saves <strong>" + percent(r) + "</strong> of the input tokens"
}
