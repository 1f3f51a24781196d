package bench

import (
	"fmt"
	"strings"
)

// AutoSmallMargin is how far above the single call the default planner may
// go on a document under OutlineGate tokens: auto answers such a document
// in one direct call (the single call itself) unless the outline planner's
// request and the sub-agents it expects stay within 80% of it, so only a
// plan whose slices come out far larger than expected passes the single
// call, and README promises no more than this.
const AutoSmallMargin = 0.10

// appendAuto adds the default planner's table and targets: what `baton
// ask` sends with no --planner flag, against the single call.
//
// loogle, when not empty, are the LooGLE documents' auto runs
// (RunLoogleAuto): they get rows and totals of their own after the corpus,
// and the targets stay the corpus's.
func appendAuto(tables []Table, targets []Target, es, loogle []Efficiency) ([]Table, []Target) {
	fail := fmt.Sprintf("auto picks a planner from estimates made before any plan exists; a document over %d tokens whose run reaches the single call, or one under it that passes it by more than %.0f%%, misses", OutlineGate, 100*AutoSmallMargin)
	if len(es) == 0 || es[0].Records[VariantAuto] == nil {
		why := "this build's orchestrate has no outline planner, so auto was not measured"
		return tables, append(targets, Target{Name: "default planner (auto) below the single call on every document over 20000 tokens", Want: "every one", Got: "not run", Why: why, Fail: fail})
	}
	tb := Table{
		Title:  "Default planner (auto) against the single call",
		Header: []string{"task", "C", "single call", "auto ran", "auto: planner", "auto: sub-agents", "auto: synthesis", "auto: total", "auto/single", "fallbacks", "target"},
	}
	var single, total int
	var large, small []string
	for _, e := range es {
		a := e.Records[VariantAuto].Accounting
		got := float64(e.Auto) / float64(max(e.Single, 1))
		mark := "below"
		switch {
		case e.Context > OutlineGate && e.Auto >= e.Single:
			mark = "**no**"
			large = append(large, fmt.Sprintf("%s: %s sent %d ≥ single call %d", e.ID, e.AutoPlanner, e.Auto, e.Single))
		case e.Context <= OutlineGate && got > 1+AutoSmallMargin:
			mark = "**over the margin**"
			small = append(small, fmt.Sprintf("%s: %s sent %.3f× the single call", e.ID, e.AutoPlanner, got))
		case e.Context <= OutlineGate:
			mark = fmt.Sprintf("≤ %.2f×", 1+AutoSmallMargin)
		}
		single, total = single+e.Single, total+e.Auto
		tb.Rows = append(tb.Rows, []string{e.ID, itoa(e.Context), singleCell(e), e.AutoPlanner,
			itoa(a.PlannerInputTokens), itoa(a.SubagentInputTokens), itoa(a.SynthesisInputTokens), itoa(e.Auto),
			ratio(e.Auto, e.Single), itoa(a.Fallbacks), mark})
	}
	tb.Rows = append(tb.Rows, []string{"**total**", "", itoa(single), "", "", "", "", itoa(total), "**" + ratio(total, single) + "**", "", ""})
	tb.Notes = []string{"`auto` is what `baton ask` runs with no `--planner` flag. Its full planner is scripted with the corpus plan and its outline planner with the outline plan of the table above; " +
		"`direct` is one call with the task and the whole document, which is the single call itself. planner_reason in each record gives the figures auto chose by."}
	if len(loogle) > 0 {
		tb.Rows, tb.Notes = loogleAutoRows(tb.Rows, tb.Notes, loogle, single, total)
	}
	share := float64(total) / float64(max(single, 1))
	return append(tables, tb), append(targets,
		Target{Name: fmt.Sprintf("default planner (auto) below the single call on every document over %d tokens", OutlineGate), Want: "every one",
			Got: fmt.Sprintf("%d missed", len(large)), Met: len(large) == 0, Why: strings.Join(large, "; "), Fail: fail},
		Target{Name: fmt.Sprintf("default planner (auto) within %.0f%% of the single call on every document under %d tokens", 100*AutoSmallMargin, OutlineGate), Want: "every one",
			Got: fmt.Sprintf("%d over", len(small)), Met: len(small) == 0, Why: strings.Join(small, "; "), Fail: fail},
		Target{Name: "default planner (auto) corpus total / single-call total", Want: fmt.Sprintf("≤ %.2f", OutlineCorpusShare), Got: fmt.Sprintf("%.3f", share), Met: share <= OutlineCorpusShare,
			Why: "the documents auto answers directly count at 1.0; see the auto/single column", Fail: "documents answered by a direct call weigh 1.0 each, so a corpus of mostly small documents, or outlines and slices near the single call, would pass half"},
	)
}

// loogleAutoRows adds the LooGLE documents' auto runs to the default
// planner's table: a row each, their total, and the total with the corpus
// (whose single-call and auto sums are corpusSingle and corpusAuto).
func loogleAutoRows(rows [][]string, notes []string, loogle []Efficiency, corpusSingle, corpusAuto int) ([][]string, []string) {
	var single, total int
	var ev EvidenceScore
	for _, e := range loogle {
		a := e.Records[VariantAuto].Accounting
		rows = append(rows, []string{e.ID, itoa(e.Context), singleCell(e), e.AutoPlanner,
			itoa(a.PlannerInputTokens), itoa(a.SubagentInputTokens), itoa(a.SynthesisInputTokens), itoa(e.Auto),
			ratio(e.Auto, e.Single), itoa(a.Fallbacks), "–"})
		single, total = single+e.Single, total+e.Auto
		ev.add(e.Evidence[VariantAuto])
	}
	rows = append(rows,
		[]string{"**total, LooGLE**", "", itoa(single), "", "", "", "", itoa(total), "**" + ratio(total, single) + "**", "", ""},
		[]string{"**total, corpus and LooGLE**", "", itoa(corpusSingle + single), "", "", "", "", itoa(corpusAuto + total), "**" + ratio(corpusAuto+total, corpusSingle+single) + "**", "", ""})
	notes = append(notes, fmt.Sprintf("The *loogle:* rows are LooGLE's short-dependency documents (given with --loogle; not part of baton), which have no headings: each is asked its first %d questions whose evidence is quoted verbatim, at once; "+
		"both model planners are scripted with the retrieval planner's plan for that task (passage pointers, as the outline of a document without headings lists passages), and the sub-agents answer from their slices as above. "+
		"Their evidence in the slices sent: %d of %d quotes (%d only via a fallback). The targets below are the corpus's.", loogleQuestions, ev.InSlice, ev.Sentences, ev.ViaFallback))
	return rows, notes
}
