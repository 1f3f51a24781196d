package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Chart geometry, in SVG user units: wide enough for a few hundred calls
// at 1280 pixels, tall enough to tell a call near the threshold from one
// far below it.
const (
	ctxChartW, ctxChartH                      = 1100, 360
	ctxChartLeft, ctxChartRight               = 80, 130
	ctxChartTop, ctxChartBottom               = 24, 44
	ctxChartPlotW                             = ctxChartW - ctxChartLeft - ctxChartRight
	ctxChartPlotH                             = ctxChartH - ctxChartTop - ctxChartBottom
	ctxColorBar, ctxColorThreshold, ctxColorW = "#1f5fbf", "#e8a317", "#5b5b5b"
	ctxColorReset                             = "#b3261e"
)

// runContextSection is the context every call of the steps' own sessions
// sent, against the threshold and the window the run started with, with a
// marker where each reset happened.
func runContextSection(v *runView) Section {
	sec := Section{ID: "context", Title: "Context per call"}
	if len(v.calls) == 0 {
		sec.Body = "<p>The log has no model call with a known context to draw.</p>"
		return sec
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<p>Each bar is one model call of a step's own session, in order: the context it sent (input, cache read and cache write tokens). "+
		"The dashed line is the threshold (%s tokens), the grey line the window (%s tokens), both from the start of the run; "+
		"a red line marks each reset, after the call it followed. Sub-agents' calls have contexts of their own and are not drawn.</p>",
		Esc(runNum(v.threshold)), Esc(runNum(v.window)))
	b.WriteString(runContextChart(v))
	rows := make([][]string, 0, len(v.calls))
	for _, c := range v.calls {
		rows = append(rows, []string{strconv.Itoa(c.n), c.step, c.skill, runTurnText(c.turn), runNum(c.context), runNum(c.baseline), strconv.Itoa(c.line)})
	}
	table := Table("The figures of the chart", []string{"Call", "Step", "Skill", "Turn", "Context tokens", "One continuous session (modelled)", "Log line"}, rows)
	if len(rows) > 40 {
		table = Details(fmt.Sprintf("The figures of the chart (%d calls)", len(rows)), table)
	}
	b.WriteString(table)
	sec.Body = b.String()
	return sec
}

func runContextChart(v *runView) string {
	top := max(v.window, v.threshold)
	for _, c := range v.calls {
		top = max(top, c.context)
	}
	yMax := float64(top) * 1.05
	if yMax <= 0 {
		yMax = 1
	}
	y := func(tokens int) float64 { return ctxChartTop + ctxChartPlotH - float64(tokens)/yMax*ctxChartPlotH }
	slot := float64(ctxChartPlotW) / float64(len(v.calls))
	barW := min(slot*0.7, 28)

	s := NewSVG(ctxChartW, ctxChartH, "Context per call",
		fmt.Sprintf("%d model calls; the largest context %s tokens; threshold %s, window %s tokens; %d resets.",
			len(v.calls), runNum(runMaxContext(v)), runNum(v.threshold), runNum(v.window), len(v.resets)))
	// Axes and ticks: four steps of the scale.
	s.Line(ctxChartLeft, ctxChartTop, ctxChartLeft, ctxChartTop+ctxChartPlotH, "#d0d0d0", 1, "", nil)
	s.Line(ctxChartLeft, ctxChartTop+ctxChartPlotH, ctxChartLeft+ctxChartPlotW, ctxChartTop+ctxChartPlotH, "#d0d0d0", 1, "", nil)
	for i := 0; i <= 4; i++ {
		t := int(yMax * float64(i) / 4)
		s.Text(ctxChartLeft-6, y(t)+4, "end", runNum(t), Attrs{{"class", "tick"}})
	}
	s.Text(ctxChartLeft+ctxChartPlotW/2, ctxChartH-8, "middle", "model calls, in order", nil)

	for _, c := range v.calls {
		x := ctxChartLeft + float64(c.n-1)*slot + (slot-barW)/2
		tip := fmt.Sprintf("call %d · step %s (%s), turn %s: %s tokens sent; one continuous session (modelled): %s",
			c.n, c.step, c.skill, runTurnText(c.turn), runNum(c.context), runNum(c.baseline))
		s.Rect(x, y(c.context), barW, y(0)-y(c.context), ctxColorBar, tip, Attrs{
			{"class", "ctx-point"}, {"data-call", strconv.Itoa(c.n)}, {"data-step", c.step}, {"data-skill", c.skill},
			{"data-turn", strconv.Itoa(c.turn)}, {"data-context-tokens", strconv.Itoa(c.context)},
			{"data-baseline-tokens", strconv.Itoa(c.baseline)}, {"data-line", strconv.Itoa(c.line)},
		})
	}
	if v.threshold > 0 {
		s.Line(ctxChartLeft, y(v.threshold), ctxChartLeft+ctxChartPlotW, y(v.threshold), ctxColorThreshold, 2, "6 4",
			Attrs{{"class", "threshold-line"}, {"data-threshold-tokens", strconv.Itoa(v.threshold)}})
		s.Text(ctxChartLeft+ctxChartPlotW+6, y(v.threshold)+4, "start", "threshold "+runNum(v.threshold), nil)
	}
	if v.window > 0 {
		s.Line(ctxChartLeft, y(v.window), ctxChartLeft+ctxChartPlotW, y(v.window), ctxColorW, 1.5, "",
			Attrs{{"class", "window-line"}, {"data-window-tokens", strconv.Itoa(v.window)}})
		s.Text(ctxChartLeft+ctxChartPlotW+6, y(v.window)+4, "start", "window "+runNum(v.window), nil)
	}
	for i, r := range v.resets {
		after := v.resetAfter(r)
		x := ctxChartLeft + float64(after)*slot
		s.Line(x, ctxChartTop, x, ctxChartTop+ctxChartPlotH, ctxColorReset, 2, "2 2", Attrs{
			{"class", "reset-marker"}, {"data-reset", strconv.Itoa(i + 1)}, {"data-after-call", strconv.Itoa(after)},
			{"data-reason", r.Reason}, {"data-step", r.Step}, {"data-context-tokens", strconv.Itoa(r.ContextTokens)},
			{"data-ledger-time", runLedgerTime(r.LedgerTime)}, {"data-line", strconv.Itoa(r.Line)},
		})
		s.Text(x+3, ctxChartTop+12+float64(i%3)*13, "start", fmt.Sprintf("reset %d (%s)", i+1, r.Reason), Attrs{{"class", "reset-label"}})
	}
	return s.String()
}

func runMaxContext(v *runView) int {
	m := 0
	for _, c := range v.calls {
		m = max(m, c.context)
	}
	return m
}

func runTurnText(t int) string {
	if t <= 0 {
		return "-"
	}
	return strconv.Itoa(t)
}

func runLedgerTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// runNum writes a token count with thousands separators.
func runNum(n int) string { return Thousands(int64(n)) }
