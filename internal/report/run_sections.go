package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/runlog"
)

// runSummary is the run at a glance: how it stands, what it cost, and what
// it saved against the continuous-session baseline.
func runSummary(v *runView, problems []runlog.Problem) Section {
	var b strings.Builder
	for _, p := range problems {
		if p.Torn {
			b.WriteString(Warn(fmt.Sprintf("Line %d of the log is unfinished (the run was probably killed while writing it); the report shows the rest.", p.Line)))
		} else {
			b.WriteString(Warn(fmt.Sprintf("Line %d of the log could not be read: %s", p.Line, p.Msg)))
		}
	}
	status := v.status
	if v.status == runStatusUnfinished {
		status = "unfinished (no run_end: still running, or stopped and resumable)"
	}
	cost := "- (a model has no price)"
	if v.priced && v.paidCalls > 0 {
		cost = pricing.FormatUSD(v.cost) + " at " + pricing.Default().Source()
	}
	rows := [][]string{
		{"Status", status},
		{"Phases", runOrNone(strings.Join(v.phases, " → "))},
		{"Model", runOrNone(v.model)},
		{"Window and threshold", fmt.Sprintf("%s and %s tokens", runNum(v.window), runNum(v.threshold))},
		{"Model calls paid", strconv.Itoa(v.paidCalls)},
		{"Tokens", runUsageText(v.usage)},
		{"Cost", cost},
		{"Resets", strconv.Itoa(len(v.resets))},
		{"Duration", v.ended.Sub(v.started).Round(1e6).String()},
	}
	b.WriteString("<table class=\"kv\"><tbody>")
	for _, r := range rows {
		fmt.Fprintf(&b, "<tr><th scope=\"row\">%s</th><td>%s</td></tr>", Esc(r[0]), Esc(r[1]))
	}
	b.WriteString("</tbody></table>")
	b.WriteString("<h3>Against one continuous session (modelled)</h3>")
	if ratio, ok := v.continuous.SavingsRatio(); ok {
		fmt.Fprintf(&b, "<p class=\"savings\" data-sent-tokens=\"%d\" data-continuous-session-tokens=\"%d\" data-savings-ratio=\"%.6f\">"+
			"The run's calls sent %s tokens of context. One continuous session doing the same work would have sent %s "+
			"(a modelled figure, not a measured one): every call carrying all the context the run had dropped before it "+
			"(%s tokens dropped in all, at step changes and resets). Saved: <strong>%.0f%%</strong>.</p>",
			v.continuous.SentTokens, v.continuous.InputTokens, ratio,
			Esc(runNum(v.continuous.SentTokens)), Esc(runNum(v.continuous.InputTokens)), Esc(runNum(v.continuous.Dropped)), 100*ratio)
		b.WriteString("<p>The baseline assumes the session makes the same calls and never compacts. A client that compacts its context on its own (auto-compaction) sends less than this, so the real saving against it is smaller.</p>")
	} else {
		b.WriteString("<p>No paid model call with a known context: there is no baseline to state.</p>")
	}
	return Section{ID: "run-summary", Title: "Summary", Body: b.String()}
}

// runStepsSection lists the phases and the steps in order with what each cost.
func runStepsSection(v *runView) Section {
	var b strings.Builder
	if len(v.phases) > 0 {
		reached := map[string]bool{}
		for _, s := range v.steps {
			reached[s.phase] = true
		}
		b.WriteString("<ol class=\"phases\">")
		for _, p := range v.phases {
			mark := "not reached"
			if reached[p] {
				mark = "reached"
			}
			fmt.Fprintf(&b, "<li data-phase=\"%s\" data-reached=\"%t\">%s <span class=\"sub\">(%s)</span></li>", Esc(p), reached[p], Esc(p), mark)
		}
		b.WriteString("</ol>")
	}
	if len(v.steps) == 0 {
		b.WriteString("<p>The log has no step.</p>")
		return Section{ID: "steps", Title: "Phases and steps", Body: b.String()}
	}
	b.WriteString("<table><caption>Steps in order; tokens and cost are of the calls paid in them, sub-agents' included</caption><thead><tr>")
	for _, h := range []string{"Step", "Phase", "Skill", "Status", "Turns", "Calls", "Input", "Output", "Cache read", "Cache write", "Cost"} {
		fmt.Fprintf(&b, "<th scope=\"col\">%s</th>", h)
	}
	b.WriteString("</tr></thead><tbody>")
	for _, s := range v.steps {
		cost := "-"
		if s.priced && s.calls > 0 {
			cost = pricing.FormatUSD(s.cost)
		}
		status := Esc(s.status)
		if s.status != "ok" && s.status != runStatusUnfinished {
			status = "<span class=\"fail\">" + status + "</span>"
		}
		if s.note != "" && s.status != "ok" {
			status += "<br><span class=\"sub\">" + Esc(runClip(s.note, 200)) + "</span>"
		}
		fmt.Fprintf(&b, "<tr class=\"step\" data-step=\"%s\" data-status=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", Esc(s.id), Esc(s.status), Esc(s.id), Esc(s.phase), Esc(s.skill), status)
		for _, n := range []int64{int64(s.turns), int64(s.calls), s.usage.InputTokens, s.usage.OutputTokens, s.usage.CacheReadInputTokens, s.usage.CacheCreationInputTokens} {
			fmt.Fprintf(&b, "<td class=\"num\">%s</td>", runNum(int(n)))
		}
		fmt.Fprintf(&b, "<td class=\"num\">%s</td></tr>", Esc(cost))
	}
	b.WriteString("</tbody></table>")
	if len(v.bounds) > 0 {
		rows := [][]string{}
		for _, e := range v.bounds {
			rows = append(rows, []string{e.Phase + " → " + e.NextPhase, runNum(e.ProjectedTokens), runNum(e.ThresholdTokens), e.Decision})
		}
		b.WriteString(Table("Phase boundaries: the context projected for the next phase against the threshold", []string{"Boundary", "Projected tokens", "Threshold", "Decision"}, rows))
	}
	return Section{ID: "steps", Title: "Phases and steps", Body: b.String()}
}

// runResetsSection lists every reset with its reason and the ledger entry the
// fresh session started from, read from the ledger the run names.
func runResetsSection(v *runView, dir string) Section {
	sec := Section{ID: "resets", Title: "Resets"}
	var b strings.Builder
	if len(v.resets) == 0 {
		b.WriteString("<p>No reset: every session stayed under the threshold.</p>")
	}
	var entries []ledger.Entry
	if len(v.resets) > 0 {
		var note string
		entries, note = readRunLedger(dir, v.ledgerPath)
		if note != "" {
			b.WriteString(Warn(note))
		}
	}
	for i, r := range v.resets {
		fmt.Fprintf(&b, "<div class=\"reset\" data-reset=\"%d\" data-reason=\"%s\" data-context-tokens=\"%d\" data-ledger-time=\"%s\">", i+1, Esc(r.Reason), r.ContextTokens, Esc(runLedgerTime(r.LedgerTime)))
		where := "at the phase boundary after " + runOrNone(r.Phase)
		if r.Step != "" {
			where = fmt.Sprintf("in step %s (%s)", r.Step, r.Skill)
		}
		fmt.Fprintf(&b, "<h3>Reset %d: %s, %s</h3>", i+1, Esc(runReasonText(r.Reason)), Esc(where))
		frac := ""
		if r.ContextFraction > 0 {
			frac = fmt.Sprintf(" (%.0f%% of the window)", 100*r.ContextFraction)
		}
		fmt.Fprintf(&b, "<p>Context at the reset: %s tokens%s. Mode: %s.</p>", Esc(runNum(r.ContextTokens)), Esc(frac), Esc(runOrNone(r.Mode)))
		if r.Note != "" {
			b.WriteString(Warn(r.Note))
		}
		switch e, ok := runFindEntry(entries, r); {
		case r.LedgerTime.IsZero():
			b.WriteString("<p>The log names no ledger entry for this reset.</p>")
		case ok:
			b.WriteString(Details("Ledger entry of "+runLedgerTime(r.LedgerTime)+" the fresh session started from", Pre(string(ledger.Render(e)))))
		case entries != nil:
			b.WriteString(Warn("The ledger holds no entry of " + runLedgerTime(r.LedgerTime) + "."))
		}
		b.WriteString("</div>")
	}
	if v.replayed > 0 {
		fmt.Fprintf(&b, "<p>%d reset(s) were taken again from a step journal when the run resumed; they are counted once, above.</p>", v.replayed)
	}
	if len(v.misses) > 0 {
		rows := [][]string{}
		for _, m := range v.misses {
			rows = append(rows, []string{m.Step, m.Skill, strconv.Itoa(m.Misses), m.Note})
		}
		b.WriteString(Table("Misses: the session was asked for a ledger entry and gave an incomplete one", []string{"Step", "Skill", "Misses in a row", "Note"}, rows))
	}
	sec.Body = b.String()
	return sec
}

// readRunLedger reads the ledger a run names (workspace-relative), or says
// why it cannot; a ledger path that leaves the workspace is not read.
func readRunLedger(dir, rel string) ([]ledger.Entry, string) {
	ws := runWorkspaceOf(dir)
	switch {
	case rel == "":
		return nil, "The run log names no ledger file: the entries cannot be shown."
	case ws == "":
		return nil, "The run folder is not inside a workspace's .baton/runs: the ledger cannot be found."
	case !filepath.IsLocal(filepath.FromSlash(rel)):
		return nil, fmt.Sprintf("The ledger path %q leaves the workspace: it is not read.", rel)
	}
	entries, _, err := ledger.Read(filepath.Join(ws, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("The ledger %s is missing: the entries cannot be shown.", rel)
	}
	if err != nil {
		return nil, fmt.Sprintf("The ledger %s could not be read: %v", rel, err)
	}
	if entries == nil {
		entries = []ledger.Entry{}
	}
	return entries, ""
}

// findEntry is the ledger entry a reset was seeded from: the one whose
// heading time is the reset's ledger_time (the latest such, should two
// share a second).
func runFindEntry(entries []ledger.Entry, r runlog.Event) (ledger.Entry, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if !r.LedgerTime.IsZero() && entries[i].Time.Equal(r.LedgerTime) {
			return entries[i], true
		}
	}
	return ledger.Entry{}, false
}

func runReasonText(reason string) string {
	switch reason {
	case runlog.ReasonThreshold:
		return "the threshold was crossed"
	case runlog.ReasonBoundary:
		return "the next phase would not fit"
	case runlog.ReasonForcedAfterMisses:
		return "forced after two incomplete ledger entries"
	case runlog.ReasonHardLimit:
		return "the context no longer fit the window"
	}
	return runOrNone(reason)
}

// runSubagentsSection lists the sub-agents' returns against their bound.
func runSubagentsSection(v *runView) Section {
	sec := Section{ID: "subagents", Title: "Sub-agent returns"}
	if len(v.subagents) == 0 {
		sec.Body = "<p>No sub-agent ran.</p>"
		return sec
	}
	var b strings.Builder
	b.WriteString("<table><caption>Each sub-agent's return against its bound (subagent_return_tokens)</caption><thead><tr>")
	for _, h := range []string{"Step", "Goal", "Tokens", "Bound", "Action", "Whole return kept in"} {
		fmt.Fprintf(&b, "<th scope=\"col\">%s</th>", h)
	}
	b.WriteString("</tr></thead><tbody>")
	for _, e := range v.subagents {
		action := Esc(e.Action)
		if e.Action != runlog.ActionAccepted {
			action = "<span class=\"fail\">" + action + "</span>"
		}
		fmt.Fprintf(&b, "<tr class=\"subagent\" data-step=\"%s\" data-tokens=\"%d\" data-contract-tokens=\"%d\" data-action=\"%s\"><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td><td>%s</td></tr>",
			Esc(e.Step), e.Tokens, e.ContractTokens, Esc(e.Action), Esc(e.Step), Esc(e.Note), runNum(e.Tokens), runNum(e.ContractTokens), action, Esc(runOrNone(e.SpillPath)))
	}
	b.WriteString("</tbody></table>")
	sec.Body = b.String()
	return sec
}

// runToolsSection counts the tool calls of each step by name, and shows the
// ones that failed.
func runToolsSection(v *runView) Section {
	sec := Section{ID: "tools", Title: "Tool calls"}
	var b strings.Builder
	var errs []runlog.Event
	for _, s := range v.steps {
		errs = append(errs, s.toolErrors...)
	}
	b.WriteString("<table><caption>Tool calls per step, by name (a call a resumed step took from its journal is counted once)</caption><thead><tr>")
	for _, h := range []string{"Step", "Skill", "Tool", "Calls", "Errors"} {
		fmt.Fprintf(&b, "<th scope=\"col\">%s</th>", h)
	}
	b.WriteString("</tr></thead><tbody>")
	n := 0
	for _, s := range v.steps {
		for _, t := range s.tools {
			n++
			name := t.name
			if t.subagent {
				name += " (sub-agent)"
			}
			errCell := "0"
			if t.errors > 0 {
				errCell = fmt.Sprintf("<span class=\"fail\">%d</span>", t.errors)
			}
			fmt.Fprintf(&b, "<tr class=\"tool\" data-step=\"%s\" data-tool=\"%s\" data-subagent=\"%t\" data-calls=\"%d\" data-errors=\"%d\"><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%s</td></tr>",
				Esc(s.id), Esc(t.name), t.subagent, t.calls, t.errors, Esc(s.id), Esc(s.skill), Esc(name), t.calls, errCell)
		}
	}
	b.WriteString("</tbody></table>")
	if n == 0 {
		sec.Body = "<p>The log has no tool call (a log written before baton logged them has none).</p>"
		return sec
	}
	if len(errs) > 0 {
		b.WriteString("<h3>Failed calls</h3><ul class=\"tool-errors\">")
		for _, e := range errs {
			fmt.Fprintf(&b, "<li class=\"fail\">step %s, turn %s, %s: %s</li>", Esc(e.Step), Esc(runTurnText(e.Turn)), Esc(e.Tool), Esc(runOrNone(e.Note)))
		}
		b.WriteString("</ul>")
	}
	sec.Body = b.String()
	return sec
}

func runUsageText(u llm.Usage) string {
	return fmt.Sprintf("%s input, %s output, %s cache read, %s cache write", runNum(int(u.InputTokens)), runNum(int(u.OutputTokens)),
		runNum(int(u.CacheReadInputTokens)), runNum(int(u.CacheCreationInputTokens)))
}

func runOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func runClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
