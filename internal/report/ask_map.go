package report

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
)

// The document map's geometry, in SVG user units.
const (
	mapW      = 1100
	mapLabelW = 170
	mapRight  = 16
	mapHeadH  = 22 // a document's name and size
	mapTopH   = 22 // its top-level sections
	mapSubH   = 10 // its second-level sections
	mapLaneH  = 14 // one delegated subtask's slice
	mapGap    = 4
	mapDocGap = 18
)

// palette tells subtasks apart; each also has its own lane and label, so
// the colour is never the only cue.
var palette = []string{"#1f5fbf", "#e8a317", "#2e7d32", "#8e44ad", "#c0392b", "#16808a", "#7f6000", "#d35400"}

// askMap draws every document as a strip of its sections, to scale by
// lines, with one lane per delegated subtask under it holding the lines its
// slice covered.
func askMap(rec *orchestrate.Record) Section {
	var b strings.Builder
	docs := rec.DocumentMap
	if len(docs) == 0 {
		docs = docsFromSlices(rec)
		b.WriteString(Warn("This record was made before runs kept their documents' outline: the strip is the context's lines as far as the slices reach, without its sections."))
	}
	var subs []orchestrate.SubtaskResult
	for _, s := range rec.Subtasks {
		if s.Mode == orchestrate.ModeDelegated {
			subs = append(subs, s)
		}
	}
	if len(docs) == 0 {
		b.WriteString("<p>No document lines are known for this run.</p>")
		return Section{ID: "document-map", Title: "Document map", Body: b.String()}
	}
	if len(subs) == 0 {
		b.WriteString("<p>No subtask was delegated: no sub-agent saw any part of the documents.</p>")
	}
	maxLines := 1
	for _, d := range docs {
		maxLines = max(maxLines, d.Lines)
	}
	stripW := float64(mapW - mapLabelW - mapRight)
	perLine := stripW / float64(maxLines)
	blockH := mapHeadH + mapTopH + mapSubH + mapGap + len(subs)*(mapLaneH+mapGap)
	h := len(docs)*(blockH+mapDocGap) + 8
	svg := NewSVG(mapW, h, "Document map",
		fmt.Sprintf("Each document as a strip of its sections, to scale by lines (the longest, %d lines, spans the width); under it one lane per delegated subtask with the lines its slice covered.", maxLines))
	var rows [][]string
	y := 4.0
	for _, d := range docs {
		x := func(line int) float64 { return mapLabelW + float64(line-d.StartLine)*perLine }
		wid := func(from, to int) float64 { return max(float64(to-from+1)*perLine, 2) }
		svg.Text(0, y+15, "start", d.Name, Attrs{{"font-weight", "600"}})
		svg.Text(mapW-mapRight, y+15, "end", fmt.Sprintf("lines %d–%d · %s lines · %s bytes", d.StartLine, d.EndLine, Thousands(int64(d.Lines)), Thousands(int64(d.Bytes))), Attrs{{"fill", "#5b5b5b"}})
		y += mapHeadH
		svg.Rect(mapLabelW, y, wid(d.StartLine, d.EndLine), mapTopH+mapSubH, "#f4f4f4", "", Attrs{{"class", "doc"}, {"data-document", d.Name}, {"stroke", "#d0d0d0"}})
		top := mainLevel(d.Sections)
		n := 0
		for _, s := range d.Sections {
			tip := fmt.Sprintf("%s, lines %d–%d", s.Title, s.StartLine, s.EndLine)
			a := Attrs{{"class", "section"}, {"data-level", itoa(s.Level)}, {"data-start-line", itoa(s.StartLine)}, {"data-end-line", itoa(s.EndLine)}, {"stroke", "#fff"}}
			if s.Level == top {
				fill := "#c9d3e0"
				if n%2 == 1 {
					fill = "#aebbd0"
				}
				n++
				svg.Rect(x(s.StartLine), y, wid(s.StartLine, s.EndLine), mapTopH, fill, tip, a)
				if w := wid(s.StartLine, s.EndLine); w > 40 {
					svg.Text(x(s.StartLine)+3, y+15, "start", fitLabel(s.Title, w-6), Attrs{{"pointer-events", "none"}})
				}
			} else {
				svg.Rect(x(s.StartLine), y+mapTopH, wid(s.StartLine, s.EndLine), mapSubH, "#dfe5ee", tip, a)
			}
		}
		if d.SectionsOmitted > 0 {
			svg.Text(mapW-mapRight, y-6, "end", fmt.Sprintf("%d more sections not drawn", d.SectionsOmitted), Attrs{{"fill", "#5b5b5b"}})
		}
		y += mapTopH + mapSubH + mapGap
		for k, s := range subs {
			colour := palette[k%len(palette)]
			svg.Text(mapLabelW-6, y+11, "end", fmt.Sprintf("#%d %s", s.Index+1, s.Skill), nil)
			svg.Line(mapLabelW, y+mapLaneH/2, mapLabelW+wid(d.StartLine, d.EndLine), y+mapLaneH/2, "#e0e0e0", 1, "", nil)
			for _, r := range sliceRegions(s, d) {
				tip := fmt.Sprintf("Subtask %d (%s) saw lines %d–%d: %s", s.Index+1, s.Skill, r.from, r.to, r.what)
				svg.Rect(x(r.from), y, wid(r.from, r.to), mapLaneH, colour, tip, Attrs{
					{"class", "slice"}, {"data-subtask", itoa(s.Index)}, {"data-document", d.Name},
					{"data-start-line", itoa(r.from)}, {"data-end-line", itoa(r.to)}, {"data-whole", fmt.Sprint(r.whole)}})
				rows = append(rows, []string{itoa(s.Index + 1), d.Name, r.what, fmt.Sprintf("%d–%d", r.from, r.to)})
			}
			y += mapLaneH + mapGap
		}
		y += mapDocGap
	}
	b.WriteString("<p>Drawn to scale by lines: every document on the same scale, its top sections above and the next level below them; each lane is one delegated subtask, marked where its sub-agent's slice lay. A slice that fell back to the whole context covers every document.</p>")
	b.WriteString(svg.String())
	b.WriteString(Table("What each sub-agent saw (the map's figures)", []string{"Subtask", "Document", "Pointer", "Lines"}, rows))
	return Section{ID: "document-map", Title: "Document map", Body: b.String()}
}

type region struct {
	from, to int
	what     string
	whole    bool
}

// sliceRegions are the lines of document d that subtask s was sent: each
// matched range inside d, or all of d for a fallback or scope all.
func sliceRegions(s orchestrate.SubtaskResult, d orchestrate.DocumentOutline) []region {
	if s.Scope == "all" || s.Slice == nil || s.Slice.Fallback {
		what := "the whole context (fallback)"
		if s.Scope == "all" {
			what = "the whole context (scope all)"
		}
		if s.Slice == nil && s.Scope != "all" {
			return nil // never cut: the run stopped before it
		}
		return []region{{from: d.StartLine, to: d.EndLine, what: what, whole: true}}
	}
	var out []region
	for _, m := range s.Slice.Matched {
		if m.StartLine < d.StartLine || m.StartLine > d.EndLine {
			continue
		}
		what := m.Pointer
		if m.Heading != "" && m.Heading != m.Pointer {
			what += " (" + m.Heading + ")"
		}
		out = append(out, region{from: m.StartLine, to: max(min(m.EndLine, d.EndLine), m.StartLine), what: what})
	}
	return out
}

// docsFromSlices is the map of a record without document_map: one strip as
// long as the slices reach.
func docsFromSlices(rec *orchestrate.Record) []orchestrate.DocumentOutline {
	last := 0
	for _, s := range rec.Subtasks {
		if s.Slice == nil {
			continue
		}
		for _, m := range s.Slice.Matched {
			last = max(last, m.EndLine)
		}
		if s.Slice.Fallback || s.Scope == "all" {
			last = max(last, s.Slice.Lines)
		}
	}
	if last <= 0 {
		return nil
	}
	name := "context"
	if len(rec.Documents) == 1 {
		name = rec.Documents[0]
	}
	return []orchestrate.DocumentOutline{{Name: name, StartLine: 1, EndLine: last, Lines: last}}
}

// fitLabel shortens a section title to what fits w units of 12px text.
func fitLabel(s string, w float64) string {
	n := int(w / 7)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 2 {
		return ""
	}
	return string(r[:n-1]) + "…"
}

// mainLevel is the level drawn in the strip's main row: the highest level
// with more than one section, so that a document under one title heading
// shows its chapters, not one box; the other level goes in the thin row.
func mainLevel(ss []orchestrate.OutlineSection) int {
	count := map[int]int{}
	for _, s := range ss {
		count[s.Level]++
	}
	best, lowest := 0, 0
	for l, n := range count {
		if lowest == 0 || l < lowest {
			lowest = l
		}
		if n > 1 && (best == 0 || l < best) {
			best = l
		}
	}
	if best == 0 {
		return lowest
	}
	return best
}
