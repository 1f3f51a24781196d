package report

import (
	"fmt"
	"strconv"
	"strings"
)

// cell is one table cell of markup the caller escaped, with an optional
// class ("num" for figures, "fail" for a failure).
type cell struct {
	html  string
	class string
}

func txt(s string) cell { return cell{html: Esc(s)} }

func num(n int64) cell { return cell{html: Esc(Thousands(n)), class: "num"} }

func failCell(s string) cell { return cell{html: Esc(s), class: "fail"} }

// htmlTable is Table for cells that carry a class or markup of their own.
func htmlTable(caption string, head []string, rows [][]cell) string {
	var b strings.Builder
	b.WriteString("<table>")
	if caption != "" {
		fmt.Fprintf(&b, "<caption>%s</caption>", Esc(caption))
	}
	b.WriteString("<thead><tr>")
	for _, h := range head {
		fmt.Fprintf(&b, "<th scope=\"col\">%s</th>", Esc(h))
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			if c.class != "" {
				fmt.Fprintf(&b, "<td class=\"%s\">%s</td>", Esc(c.class), c.html)
			} else {
				fmt.Fprintf(&b, "<td>%s</td>", c.html)
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// Thousands writes n with separators a reader can scan: 12,345. The
// command line's summaries use it too, so a figure reads the same in the
// terminal and in the report.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// percent writes a ratio such as a saving: 0.734 is "73.4%".
func percent(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

func itoa(n int) string { return strconv.Itoa(n) }

// dollars writes a cost; below a dollar it keeps four decimals, since
// one ask often costs a few cents.
func dollars(v float64) string {
	if v != 0 && v < 1 && v > -1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
