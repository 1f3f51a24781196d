package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
)

// phaseColour is the bar colour of a call's phase, the same as the token
// chart's.
var phaseColour = map[string]string{
	orchestrate.CallPlanner:   "#1f5fbf",
	orchestrate.CallSubagent:  "#2e7d32",
	orchestrate.CallMap:       "#8e44ad",
	orchestrate.CallReduce:    "#8e44ad",
	orchestrate.CallSynthesis: "#e8a317",
}

// askTimeline draws every call on one time axis, one row each: when it
// started and ended, its failed attempts and the waits before their
// retries, so the parallelism of the sub-agents shows.
func askTimeline(rec *orchestrate.Record) Section {
	var b strings.Builder
	d := rec.PhaseDurationMS
	phases := Table("Wall time of each phase", []string{"Plan", "Assemble", "Dispatch", "Synthesis", "Whole run"},
		[][]string{{ms(d.Plan), ms(d.Assemble), ms(d.Dispatch), ms(d.Synthesis), ms(rec.DurationMS)}})
	switch {
	case rec.Calls == nil:
		b.WriteString(Warn("This record was made before runs kept the times of their calls: only the phases' wall times are known."))
		b.WriteString(phases)
		return Section{ID: "timeline", Title: "Timeline", Body: b.String()}
	case len(rec.Calls) == 0:
		b.WriteString("<p>No model was called, so there is no call to draw.</p>")
		b.WriteString(phases)
		return Section{ID: "timeline", Title: "Timeline", Body: b.String()}
	}
	end := max(rec.DurationMS, 1)
	for _, c := range rec.Calls {
		end = max(end, c.EndMS)
		for _, r := range c.Retries {
			end = max(end, r.AtMS+r.WaitMS)
		}
	}
	const w, labelW, rowH, barH, axisH = 1100, 200, 20, 14, 28
	h := axisH + len(rec.Calls)*rowH + 10
	peak := peakParallel(rec.Calls)
	svg := NewSVG(w, h, "Timeline of calls",
		fmt.Sprintf("%d model calls over %d ms, at most %d at once; each row is one call from its start to its end, failed attempts marked, the waits before their retries hatched.", len(rec.Calls), end, peak))
	span := float64(w - labelW - 20)
	x := func(t int64) float64 { return labelW + float64(max(t, 0))/float64(end)*span }
	for i := 0; i <= 4; i++ {
		t := end * int64(i) / 4
		svg.Line(x(t), axisH-6, x(t), float64(h-6), "#e0e0e0", 1, "", nil)
		anchor := "middle"
		if i == 4 {
			anchor = "end"
		}
		svg.Text(x(t), axisH-10, anchor, ms(t), Attrs{{"fill", "#5b5b5b"}})
	}
	var rows [][]cell
	for i, c := range rec.Calls {
		y := float64(axisH + i*rowH)
		name := callName(c)
		svg.Text(labelW-8, y+11, "end", name, nil)
		fill := phaseColour[c.Phase]
		if fill == "" {
			fill = "#5b5b5b"
		}
		a := Attrs{{"class", "call"}, {"data-phase", c.Phase}, {"data-subtask", itoa(c.Subtask)},
			{"data-start-ms", fmt.Sprint(c.StartMS)}, {"data-end-ms", fmt.Sprint(c.EndMS)}, {"data-attempts", itoa(c.Attempts)}, {"data-status", c.Status}}
		if c.Status == orchestrate.StatusFailed {
			a = append(a, [2]string{"stroke", "#b3261e"}, [2]string{"stroke-width", "2"})
		}
		tip := fmt.Sprintf("%s: %s to %s, %d attempt(s), %s prompt tokens", name, ms(c.StartMS), ms(c.EndMS), c.Attempts, Thousands(int64(c.PromptTokens)))
		if c.Error != "" {
			tip += "; failed: " + c.Error
		}
		svg.Rect(x(c.StartMS), y, max(x(c.EndMS)-x(c.StartMS), 2), barH, fill, tip, a)
		var retries []string
		for _, r := range c.Retries {
			svg.Rect(x(r.AtMS), y+3, max(x(r.AtMS+r.WaitMS)-x(r.AtMS), 1), barH-6, "#ffffff", fmt.Sprintf("waited %s before attempt %d", ms(r.WaitMS), r.Attempt+1),
				Attrs{{"class", "wait"}, {"data-attempt", itoa(r.Attempt)}, {"data-wait-ms", fmt.Sprint(r.WaitMS)}, {"stroke", "#b3261e"}, {"stroke-dasharray", "2 2"}})
			svg.Line(x(r.AtMS), y-1, x(r.AtMS), y+barH+1, "#b3261e", 2, "", Attrs{{"class", "failed-attempt"}})
			retries = append(retries, fmt.Sprintf("attempt %d failed at %s (%s), waited %s", r.Attempt, ms(r.AtMS), r.Error, ms(r.WaitMS)))
		}
		status := txt(c.Status)
		if c.Status == orchestrate.StatusFailed {
			status = failCell(c.Status + ": " + c.Error)
		}
		rows = append(rows, []cell{txt(name), num(c.StartMS), num(c.EndMS), num(int64(c.Attempts)), txt(strings.Join(retries, "; ")), status})
	}
	fmt.Fprintf(&b, "<p>%d calls; at most <strong>%d</strong> in flight at once. A call starts when it holds a sub-agent slot; red marks are failed attempts, hatched boxes the waits before their retries.</p>", len(rec.Calls), peak)
	b.WriteString(svg.String())
	b.WriteString(htmlTable("Every call, the timeline's figures (milliseconds from the run's start)", []string{"Call", "Start ms", "End ms", "Attempts", "Retries", "Status"}, rows))
	b.WriteString(phases)
	return Section{ID: "timeline", Title: "Timeline", Body: b.String()}
}

// callName labels a call's row: its phase and subtask.
func callName(c orchestrate.Call) string {
	name := c.Phase
	switch c.Phase {
	case orchestrate.CallSubagent:
		name = "sub-agent"
	case orchestrate.CallMap, orchestrate.CallReduce:
	default:
		if c.Label != "" {
			name = c.Label
		}
		return name
	}
	return fmt.Sprintf("#%d %s", c.Subtask+1, name)
}

// peakParallel is the most calls in flight at one time.
func peakParallel(calls []orchestrate.Call) int {
	type edge struct {
		t int64
		d int
	}
	var es []edge
	for _, c := range calls {
		es = append(es, edge{c.StartMS, 1}, edge{max(c.EndMS, c.StartMS), -1})
	}
	// An end before a start at the same millisecond: calls that touch do
	// not overlap.
	sort.Slice(es, func(i, j int) bool { return es[i].t < es[j].t || es[i].t == es[j].t && es[i].d < es[j].d })
	n, peak := 0, 0
	for _, e := range es {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}

func ms(v int64) string { return Thousands(v) + " ms" }
