package slice

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// inlineText reduces a node's inline markup to the text a reader sees:
// emphasis and links keep their text, code spans their code, images their
// alt text; raw HTML (anchors such as <a id="x"></a>) is dropped.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				v := c.Segment.Value(src)
				if !c.IsRaw() {
					v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
				}
				b.Write(v)
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.Label(src))
			case *ast.RawHTML:
				// dropped
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return collapseSpace(b.String())
}

// headingTitle is the plain text of a heading found by the block-only
// parse: its lines parsed as one paragraph of inline markdown, with the
// document's link reference definitions, then reduced by inlineText. It is
// the text the full parse would give the heading.
func headingTitle(h *ast.Heading, src []byte, refs []parser.Reference) string {
	lines := h.Lines()
	var buf []byte
	for i := range lines.Len() {
		seg := lines.At(i)
		buf = append(buf, seg.Value(src)...)
	}
	if !hasMarkup(buf) || len(buf) > MaxInlineTitle || markupBytes(buf) > MaxTitleMarkup {
		// Nothing inline markdown would change, or a title too long or
		// too full of markup to be one: the words as written.
		return collapseSpace(string(buf))
	}
	var opts []parser.ParseOption
	if len(refs) > 0 && bytes.IndexByte(buf, '[') >= 0 {
		hc := parser.NewContext()
		for _, r := range refs {
			hc.AddReference(r)
		}
		opts = append(opts, parser.WithContext(hc))
	}
	root := inlineOnly().Parse(text.NewReader(buf), opts...)
	var parts []string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		parts = append(parts, inlineText(n, buf))
	}
	return collapseSpace(strings.Join(parts, " "))
}

// MaxInlineTitle is the longest heading, in bytes, whose inline markup is
// parsed for its title; a longer one is taken as written. Inline parsing
// of unclosed emphasis and brackets grows faster than the text, and no
// heading written as a title comes near this.
const MaxInlineTitle = 4096

// MaxTitleMarkup is the most bytes of possible markup (those hasMarkup
// looks for) a heading may hold and still have its inline markup parsed.
// The inline parser may scan the rest of the title for each of them (a
// link's label for every bracket, a raw HTML tag for every '<'), so a
// heading of 3,800 nested brackets cost 10 ms; a title written by hand holds
// a dozen or two.
const MaxTitleMarkup = 64

func markupBytes(b []byte) int {
	n := 0
	for _, c := range b {
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '&', '!', '~':
			n++
		}
	}
	return n
}

// hasMarkup reports whether b holds a byte that inline markdown could read
// as markup: emphasis, code, links, images, autolinks and raw HTML, escapes
// and entities.
func hasMarkup(b []byte) bool {
	return bytes.ContainsAny(b, "\\`*_[]<>&!~")
}

// inlineOnly parses a pointer as a single run of inline markdown: with only
// the paragraph block parser, "1. Intro" stays text instead of becoming a
// list, and "[x]: y" is not swallowed as a link definition.
var inlineOnly = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(util.Prioritized(parser.NewParagraphParser(), 1000)),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
	)
})

// plainPointer reduces a pointer to the plain text of the heading it names:
// surrounding quotes, ATX markers and inline markup go.
func plainPointer(p string) string {
	p = stripWrapping(p)
	if p == "" {
		return ""
	}
	src := []byte(p)
	root := inlineOnly().Parse(text.NewReader(src))
	var parts []string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		parts = append(parts, inlineText(n, src))
	}
	return stripWrapping(strings.Join(parts, " "))
}

var (
	leadingHashes  = regexp.MustCompile(`^#+\s*`)
	trailingHashes = regexp.MustCompile(`\s+#+$`)
)

// quotePairs are the quote marks models put around a heading they cite.
var quotePairs = [][2]string{{`"`, `"`}, {`'`, `'`}, {"`", "`"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}, {"„", "“"}}

func stripWrapping(p string) string {
	for {
		before := p
		p = collapseSpace(p)
		p = leadingHashes.ReplaceAllString(p, "")
		p = trailingHashes.ReplaceAllString(p, "")
		for _, q := range quotePairs {
			if len(p) >= len(q[0])+len(q[1]) && strings.HasPrefix(p, q[0]) && strings.HasSuffix(p, q[1]) {
				p = p[len(q[0]) : len(p)-len(q[1])]
			}
		}
		if p == before {
			return p
		}
	}
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// key folds a title to what matching compares: lower case, punctuation and
// spacing gone. Letters, digits and symbols that change meaning (C++, C#,
// Q&A) stay; a '.' between digits stays so "3.2" does not become "32".
func key(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case strings.ContainsRune("+#&@%$=<>", r):
			b.WriteRune(r)
		case r == '.' && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
		case r == '\'' || r == '’':
			// "What's" and "Whats" are the same heading.
		default:
			b.WriteByte(' ')
		}
	}
	return collapseSpace(b.String())
}

func compact(k string) string { return strings.ReplaceAll(k, " ", "") }

// numberingRe recognises the enumeration in front of a title: "3.2",
// "3.2.", "Section 3.2", "§4", "A.", "(b)", "IV)", "Appendix A:", "Step 2 -".
// Letters and roman numerals need a following '.' or ')' unless a word such
// as "Section" introduces them, so "A Tale" keeps its "A".
var numberingRe = regexp.MustCompile(`(?i)^(?:` +
	`(§\s*|(?:section|sect\.|sec\.|chapter|chap\.|ch\.|part|appendix|app\.|step|phase|stage)\s+)(\d+(?:\.\d+)*|[ivx]+|[a-z])\b\.?\)?` +
	`|(\d+(?:\.\d+)*)[.)]?` +
	`|([a-z]|[ivx]+)[.)]` +
	`|\((\d+|[a-z]|[ivx]+)\)` +
	`)(?:\s*[:\-–—]\s*|\s+|$)`)

// splitNumbering separates a title's enumeration from its words. label is
// the word that introduced the number ("step", "appendix"), folded so that
// "Sec." and "§" both read "section".
func splitNumbering(s string) (label, num, rest string) {
	if !mayNumber(s) {
		return "", "", s
	}
	m := numberingRe.FindStringSubmatch(s)
	if m == nil {
		return "", "", s
	}
	label = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(m[1])), ".")
	switch label {
	case "§", "sec", "sect":
		label = "section"
	case "chap", "ch":
		label = "chapter"
	case "app":
		label = "appendix"
	}
	for _, g := range m[2:] {
		if g != "" {
			num = strings.ToLower(g)
			break
		}
	}
	return label, num, strings.TrimSpace(s[len(m[0]):])
}

// mayNumber reports whether numberingRe could match s: most titles start
// with a word that is no label and no enumeration, and the regular
// expression is most of the cost of indexing a large document's headings.
// It never says no where the expression would match.
func mayNumber(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	switch {
	case r >= '0' && r <= '9', r == '§', r == '(':
		return true
	case !unicode.IsLetter(r):
		return false
	}
	p := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if p < 0 {
		p = len(s)
	}
	if p < len(s) && (s[p] == '.' || s[p] == ')') {
		return true
	}
	for _, l := range numberingLabels {
		if strings.EqualFold(s[:p], l) {
			return true
		}
	}
	return false
}

// numberingLabels are the words numberingRe accepts before a number.
var numberingLabels = []string{"section", "chapter", "part", "appendix", "step", "phase", "stage"}

// fillerRe matches words models wrap around a title they cite: "the Results
// section" names "Results".
var fillerRe = regexp.MustCompile(`(?i)^(?:the\s+)|\s+(?:section|chapter)$`)

// mayFiller reports whether fillerRe could match s (a cheap test before the
// expression; it never says no where the expression would match).
func mayFiller(s string) bool {
	if len(s) >= 3 && strings.EqualFold(s[:3], "the") {
		return true
	}
	tail := strings.ToLower(s[max(0, len(s)-8):])
	return strings.HasSuffix(tail, "ection") || strings.HasSuffix(tail, "hapter")
}

// headingKeys are the precomputed forms a heading or pointer is compared in.
type headingKeys struct {
	clean string // plain text, spacing collapsed
	full  string // compact key of the whole title
	label string // word that introduced the enumeration, "" when none
	num   string // enumeration, "" when none
	rest  string // compact key without the enumeration
	words []string
	named string // compact key of the title with its ordinal ("notes2"), "" when it has none
}

func keysOf(title string) headingKeys {
	k := headingKeys{clean: collapseSpace(title)}
	k.full = compact(key(k.clean))
	label, num, rest := splitNumbering(k.clean)
	k.label, k.num = label, strings.TrimSuffix(num, ".")
	if mayFiller(rest) {
		rest = fillerRe.ReplaceAllString(rest, "")
	}
	rk := key(rest)
	k.rest = compact(rk)
	k.words = strings.Fields(rk)
	return k
}
