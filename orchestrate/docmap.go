package orchestrate

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/slice"
)

// Bounds of a record's document map: a report draws the top two heading
// levels of each document, and a document of thousands of headings must
// not make every record of a run over it large.
const (
	MapLevels      = 2
	MaxMapSections = 200
	maxTitleRunes  = 120
)

// DocumentOutline is one document of the context as the run saw it: where
// it lies in the context, its size and its top sections. Lines are the
// context's, the numbers slices' matched ranges use; for several documents
// combined, each starts on the "# name" heading the combination added.
type DocumentOutline struct {
	Name      string `json:"name"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Lines     int    `json:"lines"`
	Bytes     int    `json:"bytes"`
	// Sections are the headings of the document's top MapLevels levels (a
	// lone title heading above them not counted),
	// in order, at most MaxMapSections; SectionsOmitted counts the ones
	// of those levels left out past that bound.
	Sections        []OutlineSection `json:"sections"`
	SectionsOmitted int              `json:"sections_omitted,omitempty"`
}

// OutlineSection is one heading and the lines of its section. Level is the
// heading's level as its document writes it.
type OutlineSection struct {
	Title     string `json:"title"`
	Level     int    `json:"level"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// documentMap outlines each document of the context from the parse the run
// already made (doc), without parsing again.
func documentMap(doc *slice.Document, text string, sources []string, parts []slice.Part) []DocumentOutline {
	last := doc.NumLines()
	heads := doc.Outline()
	if len(parts) == 0 && len(sources) > 1 {
		parts = combinedParts(heads, sources, last)
	}
	combined := len(parts) > 0
	if !combined {
		name := "context"
		if len(sources) == 1 {
			name = sources[0]
		}
		parts = []slice.Part{{Name: name, StartLine: 1, EndLine: last}}
	}
	bounds := make([]int, 0, 2*len(parts))
	for _, p := range parts {
		bounds = append(bounds, p.StartLine, p.EndLine+1)
	}
	offs := lineOffsets(text, bounds)
	out := make([]DocumentOutline, 0, len(parts))
	for _, p := range parts {
		d := DocumentOutline{Name: p.Name, StartLine: p.StartLine, EndLine: min(p.EndLine, last), Sections: []OutlineSection{}}
		d.Lines = max(d.EndLine-d.StartLine+1, 0)
		d.Bytes = max(offs[p.EndLine+1]-offs[p.StartLine], 0)
		// The document's headings by index: a Heading is large, and a
		// document may have a million of them.
		var own []int
		for i, h := range heads {
			if h.Line < p.StartLine || h.Line > p.EndLine || combined && h.Line == p.StartLine {
				continue
			}
			if combined {
				heads[i].Level-- // Combine moved the file's headings down one level
			}
			own = append(own, i)
		}
		keep := topLevels(heads, own)
		for _, i := range own {
			h := &heads[i]
			if h.Level > keep {
				continue
			}
			if len(d.Sections) == MaxMapSections {
				d.SectionsOmitted++
				continue
			}
			d.Sections = append(d.Sections, OutlineSection{Title: clipTitle(h.Title), Level: h.Level, StartLine: h.Line, EndLine: min(h.EndLine, d.EndLine)})
		}
		out = append(out, d)
	}
	return out
}

// combinedParts finds the documents of a context that slice.Combine made
// from several sources when the caller did not pass its parts: Combine
// moves every file's headings down a level, so the level-1 headings are
// exactly the files' own "# name" headings. Any other shape is not taken
// for a combination (nil).
func combinedParts(heads []slice.Heading, sources []string, last int) []slice.Part {
	var starts []int
	for _, h := range heads {
		if h.Level == 1 {
			starts = append(starts, h.Line)
		}
	}
	if len(starts) != len(sources) || starts[0] != 1 {
		return nil
	}
	parts := make([]slice.Part, len(starts))
	for i, st := range starts {
		end := last
		if i+1 < len(starts) {
			end = starts[i+1] - 1
		}
		parts[i] = slice.Part{Name: sources[i], StartLine: st, EndLine: end}
	}
	return parts
}

// topLevels is the deepest level kept: the MapLevels smallest levels used,
// not counting a lone title heading.
func topLevels(heads []slice.Heading, own []int) int {
	var levels []int
	for _, i := range own {
		if !slices.Contains(levels, heads[i].Level) {
			levels = append(levels, heads[i].Level)
		}
	}
	if len(levels) == 0 {
		return 0
	}
	slices.Sort(levels)
	keep := MapLevels
	if n := 0; len(levels) > MapLevels {
		// A lone title heading over the whole document is not a level of
		// its structure: keep two levels under it.
		for _, i := range own {
			if heads[i].Level == levels[0] {
				n++
			}
		}
		if n == 1 {
			keep++
		}
	}
	return levels[min(keep, len(levels))-1]
}

// lineOffsets maps each wanted 1-based line to the byte offset it starts
// at; a line past the end maps to len(text). One pass, no copy.
func lineOffsets(text string, lines []int) map[int]int {
	want := slices.Clone(lines)
	slices.Sort(want)
	out := make(map[int]int, len(want))
	line, off := 1, 0
	for _, l := range want {
		for line < l && off < len(text) {
			i := strings.IndexByte(text[off:], '\n')
			if i < 0 {
				off = len(text)
				break
			}
			off += i + 1
			line++
		}
		if line < l {
			off = len(text)
		}
		out[l] = off
	}
	return out
}

func clipTitle(s string) string {
	if utf8.RuneCountInString(s) <= maxTitleRunes {
		return s
	}
	r := []rune(s)
	return string(r[:maxTitleRunes-1]) + "…"
}
