package bench

import (
	"regexp"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// seedHeadingText is the heading as the seed's assembler sees it: the raw
// source line with its '#' markers and surrounding space removed, markup and
// all.
var atxMarks = regexp.MustCompile(`^\s{0,3}#{1,6}\s*|\s+#+\s*$`)

// SeedSpans applies the rule of design note 002's assembler.py: a section
// pointer matches every heading whose text equals it case-insensitively; the
// section runs through the next heading of the same or higher level. It
// returns the matched line spans and whether the seed would fall back to the
// whole context (no pointer matched). Heading positions come from baton's
// outline, so code fences are treated as the seed's regex scan would at best.
func SeedSpans(d *slice.Document, sections []string) (spans [][2]int, fallback bool) {
	lines := d.Lines()
	for _, ptr := range sections {
		want := strings.TrimSpace(ptr)
		for _, h := range d.Outline() {
			if strings.EqualFold(seedHeadingText(lines, h), want) {
				spans = append(spans, [2]int{h.Line, h.EndLine})
			}
		}
	}
	return spans, len(spans) == 0
}

func seedHeadingText(lines []string, h slice.Heading) string {
	if h.Line < 1 || h.Line > len(lines) {
		return h.Title
	}
	raw := lines[h.Line-1]
	if !strings.HasPrefix(strings.TrimLeft(raw, " "), "#") {
		// A setext heading: its text line as written.
		return strings.TrimSpace(raw)
	}
	return strings.TrimSpace(atxMarks.ReplaceAllString(raw, ""))
}
