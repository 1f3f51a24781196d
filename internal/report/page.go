// Package report renders a run of the history as one self-contained HTML
// file: inline CSS and SVG, no script, no network, no web font, so the file
// opens offline, prints, and can be mailed or attached to a ticket as it is.
//
// The charts are SVG built by hand (svg.go) rather than with a charting
// library: they are a handful of rectangles, lines and labels whose every
// coordinate comes from the record, each element carries the figures it was
// drawn from in data-* attributes (the browser tests read them back), and
// every chart has a text alternative (a <title>, an aria-label and a table
// of the same figures), which chart libraries for Go do not give.
//
// Ask(w, rec, opts) draws an ask record; Run(w, run, opts) a workflow run.
package report

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// Section is one part of a page: a heading and its HTML body, which the
// section's author has escaped (use Esc for every text that came from a
// record, a document or a model).
type Section struct {
	ID    string // the element id, for links within the page
	Title string
	Body  string
}

// Page is one report.
type Page struct {
	Title    string
	Subtitle string // one line under the title: the kind, the id, when
	Sections []Section
}

// Esc escapes text for HTML content and attribute values.
func Esc(s string) string { return html.EscapeString(s) }

// WritePage writes p as a whole HTML document.
func WritePage(w io.Writer, p Page) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// No resource may come from anywhere: the report is read offline, and a
	// record's text (a model's answer) must not be able to fetch anything.
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", Esc(p.Title), css)
	fmt.Fprintf(&b, "<header><h1>%s</h1>", Esc(p.Title))
	if p.Subtitle != "" {
		fmt.Fprintf(&b, "<p class=\"sub\">%s</p>", Esc(p.Subtitle))
	}
	b.WriteString("</header>\n")
	if len(p.Sections) > 1 {
		b.WriteString("<nav aria-label=\"Contents\"><ul>")
		for _, s := range p.Sections {
			fmt.Fprintf(&b, "<li><a href=\"#%s\">%s</a></li>", Esc(s.ID), Esc(s.Title))
		}
		b.WriteString("</ul></nav>\n")
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "<section id=\"%s\">\n<h2>%s</h2>\n%s\n</section>\n", Esc(s.ID), Esc(s.Title), s.Body)
	}
	b.WriteString("<footer>Made by baton runs report. Every figure comes from the run's record.</footer>\n</main>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Table renders rows under head as an HTML table; cells are escaped here.
// A chart's figures go in one too, as its text alternative.
func Table(caption string, head []string, rows [][]string) string {
	cells := make([][]cell, len(rows))
	for i, r := range rows {
		cells[i] = make([]cell, len(r))
		for j, c := range r {
			cells[i][j] = txt(c)
		}
	}
	return htmlTable(caption, head, cells)
}

// Pre is text shown as written (an answer, a ledger entry), escaped.
func Pre(s string) string { return "<pre class=\"text\">" + Esc(s) + "</pre>" }

// Details is a collapsed block the reader can open (a ledger entry, a long
// output); it prints open, so paper loses nothing.
func Details(summary, body string) string {
	return "<details><summary>" + Esc(summary) + "</summary>" + body + "</details>"
}

// Warn is a highlighted line: a warning, a fallback, a failure.
func Warn(s string) string { return "<p class=\"warn\" role=\"note\">" + Esc(s) + "</p>" }

// css is the whole style: readable at 1280×800, printable in black on white,
// colours that keep their meaning in grey (each mark also has a pattern of
// text or position, never colour alone).
const css = `
:root{--fg:#1a1a1a;--muted:#5b5b5b;--line:#d0d0d0;--accent:#1f5fbf;--hi:#e8a317;--bad:#b3261e;--ok:#2e7d32;--bg:#fff}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:var(--bg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1200px;margin:0 auto;padding:24px 32px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.sub{color:var(--muted);margin:0}
nav ul{list-style:none;padding:0;margin:12px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
a{color:var(--accent)}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}
caption{text-align:left;color:var(--muted);padding-bottom:4px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
pre.text{white-space:pre-wrap;word-wrap:break-word;background:#f7f7f7;border:1px solid var(--line);padding:10px;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace;max-height:none}
.warn{border-left:4px solid var(--hi);background:#fff7e6;padding:6px 10px;margin:6px 0}
.fail{color:var(--bad);font-weight:600}
svg{max-width:100%;height:auto;display:block;margin:8px 0}
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}
details{margin:6px 0}summary{cursor:pointer}
footer{color:var(--muted);font-size:12px;margin-top:40px;border-top:1px solid var(--line);padding-top:8px}
@media print{main{max-width:none;padding:0}nav{display:none}details>*{display:block}pre.text{max-height:none}section{break-inside:auto}svg{break-inside:avoid}a{color:inherit}}
`
