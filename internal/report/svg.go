package report

import (
	"fmt"
	"strings"
)

// SVG builds one inline chart. Every chart gets a title and a description
// (its text alternative, read by screen readers and shown as a tooltip);
// callers also put the chart's figures in a Table beside it.
type SVG struct {
	W, H int
	b    strings.Builder
}

// NewSVG starts a chart of w×h user units with its accessible name and
// description.
func NewSVG(w, h int, title, desc string) *SVG {
	s := &SVG{W: w, H: h}
	fmt.Fprintf(&s.b, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"%s-t %s-d\">",
		w, h, w, h, slug(title), slug(title))
	fmt.Fprintf(&s.b, "<title id=\"%s-t\">%s</title><desc id=\"%s-d\">%s</desc>", slug(title), Esc(title), slug(title), Esc(desc))
	return s
}

// Attrs are extra attributes of one element, written in the order given;
// data-* attributes carry the figures an element was drawn from.
type Attrs [][2]string

func (a Attrs) String() string {
	var b strings.Builder
	for _, kv := range a {
		fmt.Fprintf(&b, " %s=\"%s\"", kv[0], Esc(kv[1]))
	}
	return b.String()
}

// Rect draws a rectangle; tip, when not empty, is its tooltip (a <title>).
func (s *SVG) Rect(x, y, w, h float64, fill, tip string, a Attrs) {
	if w < 0 {
		w = 0
	}
	if h < 0 {
		h = 0
	}
	fmt.Fprintf(&s.b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s>", x, y, w, h, Esc(fill), a)
	if tip != "" {
		fmt.Fprintf(&s.b, "<title>%s</title>", Esc(tip))
	}
	s.b.WriteString("</rect>")
}

// Line draws a line; dash is a stroke-dasharray ("" for solid).
func (s *SVG) Line(x1, y1, x2, y2 float64, stroke string, width float64, dash string, a Attrs) {
	fmt.Fprintf(&s.b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"", x1, y1, x2, y2, Esc(stroke), width)
	if dash != "" {
		fmt.Fprintf(&s.b, " stroke-dasharray=\"%s\"", Esc(dash))
	}
	fmt.Fprintf(&s.b, "%s/>", a)
}

// Text writes a label; anchor is "start", "middle" or "end".
func (s *SVG) Text(x, y float64, anchor, text string, a Attrs) {
	fmt.Fprintf(&s.b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s</text>", x, y, Esc(anchor), a, Esc(text))
}

// Polyline draws connected points.
func (s *SVG) Polyline(points [][2]float64, stroke string, width float64, a Attrs) {
	var p strings.Builder
	for i, pt := range points {
		if i > 0 {
			p.WriteByte(' ')
		}
		fmt.Fprintf(&p, "%.1f,%.1f", pt[0], pt[1])
	}
	fmt.Fprintf(&s.b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>", p.String(), Esc(stroke), width, a)
}

// Raw adds markup the caller built and escaped (a <g> group, say).
func (s *SVG) Raw(markup string) { s.b.WriteString(markup) }

// String ends the chart and returns its markup.
func (s *SVG) String() string { return s.b.String() + "</svg>" }

// slug makes an id fragment of a title: letters and digits, others as "-".
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "chart"
	}
	return out
}
