// Package slice is baton's assembler: it cuts the part of a document that one
// subtask needs, by markdown section or by line range, without calling a
// model.
//
// Pointers to sections are written by language models, so matching tolerates
// the ways models restate a heading (case, numbering, markup, parent paths,
// small typos) but never guesses loosely: a pointer that names nothing in the
// document comes back unmatched rather than bound to a neighbouring section.
// Only when no pointer matches at all does the whole document go, and the
// Result says so.
//
// Matching runs in tiers and the first tier with any hit wins: exact (the
// heading's plain text), normalized (case, spacing, punctuation, quotes,
// leading '#'s and inline markup ignored), numbering (section numbers and
// labels such as "3.2", "Section 3.2", "A.", "IV.", "Step 2:" set aside, but
// two different numbers never match), path ("Methods > Sampling": the last
// part names the heading, earlier parts its ancestors in order) and typo (a
// slip of one letter that cannot be read as another real word: see
// typo.go). Every heading also has a unique path ("Globex > Pricing",
// "Notes (2)" for the second of two equal titles), which a pointer may cite
// as written. A pointer that names several sections equally well is
// ambiguous and comes back unmatched, with the candidates' paths in a
// warning, unless one of them holds all the others; any other unmatched
// pointer is a warning naming the nearest headings.
package slice

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Heading is one markdown heading and the section it opens.
type Heading struct {
	Level int    `json:"level"`
	Title string `json:"title"` // plain text: markup reduced to what a reader sees
	// Line is the heading's first line; EndLine is the last line of its
	// section (the line before the next heading of the same or higher
	// level, or the document's last line). Both are 1-indexed.
	Line    int      `json:"line"`
	EndLine int      `json:"end_line"`
	Path    []string `json:"path"` // titles of the enclosing headings, outermost first
	// UniquePath names this heading alone in the document: the enclosing
	// headings' unique paths and the title joined with " > ", with an
	// ordinal for equal titles under one parent ("Globex > Pricing",
	// "Notes (2)"). A pointer may cite it as written.
	UniquePath string `json:"unique_path"`
	// ID is the id of a trailing attribute block (`## Title {#id}`), which
	// a pointer may cite instead of, or beside, the title.
	ID string `json:"id,omitempty"`

	// raw is the line span of the heading itself (several lines for a
	// setext heading); Combine rewrites exactly these lines.
	rawEnd int
	setext bool
	plain  bool   // a plain-text heading (plaintext.go), not markdown
	html   bool   // an HTML heading element (htmlheading.go)
	name   string // the last part of UniquePath: the title with its ordinal, if any
	// keys is filled by Document.index on first Extract; a pointer, so
	// that the headings of a document that is never matched against (a
	// dry run's) take a word each for them, not fifteen.
	keys *headingKeys
	anc  []int // indexes of the enclosing headings, outermost first
}

// Document is parsed markdown with its headings indexed by line. Any bytes
// are a document; parsing never fails.
type Document struct {
	// text is the document; src is the same bytes, for the parser and the
	// scans, and is never written to.
	text       string
	src        []byte
	lineStarts lineIndex // byte offset of the start of each line
	headings   []Heading

	// Matching keys are built on the first Extract, not in Parse: Combine
	// and Outline never need them, and a Document may be shared by
	// concurrent Extract calls.
	indexOnce sync.Once

	// vocab memoises usesWord: whether a word occurs in the document.
	vocabMu sync.Mutex
	vocab   map[string]bool

	passageState

	// capped counts the lines whose nesting past MaxNesting was read as
	// text (nesting.go).
	capped int
	// headingsCut counts the headings past MaxHeadings, read as text.
	headingsCut int
}

// MaxHeadings is how many headings the structure pass takes as sections;
// the headings after them are read as text, part of the last section, and
// HeadingsCut says how many. Every heading costs a record, a unique path,
// a place in the retrieval index and a line of the outline, and a document
// cheap to write can hold millions ("# x" is four bytes); the largest
// documents written by hand hold some tens of thousands.
const MaxHeadings = 50_000

// markdown is shared: goldmark parsers hold no per-parse state, and building
// one is not free.
var markdown = sync.OnceValue(func() parser.Parser {
	p := goldmark.DefaultParser()
	// As blocksOnly reads them: an attribute block is not part of a title.
	p.AddOptions(parser.WithHeadingAttribute(), parser.WithParagraphTransformers(linkRefTransformer))
	return p
})

// blocksOnly finds the document's structure without parsing the inline
// markup of every paragraph, which is most of a full parse (raw HTML and
// link scanning) and of no use to an assembler: only a heading's own text is
// parsed inline, by headingTitle. Link reference definitions are still
// collected, since they decide whether "[x]" in a heading is a link.
var blocksOnly = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(structureBlockParsers()...),
		// `## Title {#id .class}` (kramdown, pandoc, MkDocs, Hugo, RFC sources):
		// the block is an attribute, not part of the title.
		parser.WithHeadingAttribute(),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			linkRefTransformer, util.Prioritized(dropParagraphText{}, 1000))...),
	)
})

// dropParagraphText empties a finished paragraph, once its link reference
// definitions are taken, so that the parser's inline pass has nothing to
// walk: a paragraph is never a section boundary. A paragraph that a setext
// underline is turning into a heading is kept: the parser calls the
// transformers with the underline as the current line, and the heading takes
// the paragraph's lines. Any line that could be such an underline keeps the
// paragraph, which costs only time.
type dropParagraphText struct{}

func (dropParagraphText) Transform(node *ast.Paragraph, reader text.Reader, _ parser.Context) {
	line, _ := reader.PeekLine()
	if mayUnderline(line) {
		return
	}
	node.Lines().Clear()
}

// mayUnderline reports whether line, less any block quote markers, is only
// '=' or '-' and white space.
func mayUnderline(line []byte) bool {
	t := bytes.TrimLeft(line, " \t>")
	t = bytes.TrimRight(t, " \t\r\n")
	return len(t) > 0 && (len(bytes.Trim(t, "= \t")) == 0 || len(bytes.Trim(t, "- \t")) == 0)
}

// Parse indexes src. Only headings at the top level of the document open
// sections: a heading inside a block quote or list item is quoted content,
// not structure. YAML front matter at the start is not markdown and holds no
// headings. The Document keeps its own copy of src.
func Parse(src []byte) *Document { return ParseString(string(src)) }

// ParseString is Parse of a string, which the Document shares rather than
// copies: the text a caller already holds (a run's whole context) is not
// held twice, and Text and whole-section cuts return parts of it.
func ParseString(s string) *Document {
	d, _ := ParseContext(context.Background(), s)
	return d
}

// ParseContext is ParseString that stops early when ctx is done, returning
// ctx's error and no Document. The pass is linear in the size of s: block
// quotes and list items nested past MaxNesting are read as text, and
// CappedLines says on how many lines; headings past MaxHeadings are read as
// text, and HeadingsCut says how many.
func ParseContext(ctx context.Context, s string) (*Document, error) {
	return parseContext(ctx, s, false)
}

// parseContext is ParseContext, reading s as an MDX page (mdx.go) when mdx
// is set or its content says so.
func parseContext(ctx context.Context, s string, mdx bool) (*Document, error) {
	src := unsafe.Slice(unsafe.StringData(s), len(s)) // never written to
	d := &Document{text: s, src: src, lineStarts: lineStarts(src)}
	parseSrc, capped := capNesting(parseView(src, mdx))
	d.capped = capped
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc := parser.NewContext()
	hc := &headingCap{}
	pc.Set(headingCapKey, hc)
	// The parser reads long runs of plain lines folded (plainruns.go);
	// everything after it reads parseSrc, as the document is.
	root := blocksOnly().Parse(&cancelReader{Reader: text.NewReader(parserView(parseSrc)), ctx: ctx}, parser.WithContext(pc))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	refs := pc.References()
	// Sized once: a document of a million headings would otherwise hold
	// the outgrown copies of its headings too.
	n := 0
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Kind() == ast.KindHeading {
			n++
		}
	}
	d.headings = make([]Heading, 0, min(n, MaxHeadings))
	d.headingsCut = hc.refused
	var stack []int // indexes into d.headings of the open ancestors
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if hb, ok := n.(*ast.HTMLBlock); ok {
			for _, hh := range d.htmlHeadings(hb, parseSrc) {
				if len(d.headings) == MaxHeadings {
					d.headingsCut++
					continue
				}
				stack = d.push(stack, Heading{Level: hh.level, Title: hh.title, Line: hh.line, ID: hh.id, rawEnd: hh.endLine, html: true})
			}
			continue
		}
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		if len(d.headings) == MaxHeadings {
			d.headingsCut++
			continue
		}
		if len(d.headings)%4096 == 4095 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		start := headingStart(h)
		if start < 0 {
			continue
		}
		line := d.lineOf(start)
		rawEnd := line
		setext := !atxLine.Match(d.lineBytes(parseSrc, line)) && h.Lines().Len() > 0
		if setext {
			// The underline follows the last text line.
			rawEnd = d.lineOf(h.Lines().At(h.Lines().Len()-1).Start) + 1
		}
		title := headingTitle(h, parseSrc, refs)
		stack = d.push(stack, Heading{
			Level: h.Level, Title: title, Line: line, ID: headingID(h),
			rawEnd: rawEnd, setext: setext,
		})
	}
	if len(d.headings) == 0 && d.headingsCut == 0 {
		d.headings = d.plainHeadings(parseSrc)
		if len(d.headings) > MaxHeadings {
			d.headingsCut = len(d.headings) - MaxHeadings
			d.headings = d.headings[:MaxHeadings:MaxHeadings]
		}
	}
	// A section runs to the line before the next heading of the same or
	// higher level.
	last := d.NumLines()
	for i := range d.headings {
		d.headings[i].EndLine = last
		for j := i + 1; j < len(d.headings); j++ {
			if d.headings[j].Level <= d.headings[i].Level {
				d.headings[i].EndLine = d.headings[j].Line - 1
				break
			}
		}
	}
	d.uniquePaths()
	if len(s) >= collectAfter {
		// The syntax tree of a large document is hundreds of MB, all
		// garbage now, and the collector's next goal is twice the heap at
		// its last collection, which ran while the tree was live: what
		// comes after the parse (counting, the outline, the plan) would
		// grow the heap on top of the tree's peak before any of it is
		// freed. Collecting now starts them from the document alone.
		runtime.GC()
	}
	return d, nil
}

// collectAfter is the size of a document past which ParseContext collects
// its syntax tree before returning.
const collectAfter = 4 << 20

// push appends h to the document's headings under the open ancestors on
// stack, which it returns with h open.
func (d *Document) push(stack []int, h Heading) []int {
	for len(stack) > 0 && d.headings[stack[len(stack)-1]].Level >= h.Level {
		stack = stack[:len(stack)-1]
	}
	h.Path = make([]string, 0, len(stack))
	for _, i := range stack {
		h.Path = append(h.Path, d.headings[i].Title)
	}
	h.anc = append([]int(nil), stack...)
	d.headings = append(d.headings, h)
	return append(stack, len(d.headings)-1)
}

// headingID is the id of h's attribute block, or "".
func headingID(h *ast.Heading) string {
	v, ok := h.AttributeString("id")
	if !ok {
		return ""
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return ""
}

// HeadingsCut is how many headings past MaxHeadings the structure pass
// read as text: 0 for any document written by hand.
func (d *Document) HeadingsCut() int { return d.headingsCut }

// CappedLines is how many lines had block quotes or list items nested
// deeper than MaxNesting (or indented too far under many of them), whose
// deeper part the structure pass read as text: 0 for any document written
// by hand.
func (d *Document) CappedLines() int { return d.capped }

// parseView returns the bytes goldmark should see: the same length and line
// breaks as src, so offsets map to lines directly. A lone '\r' ends a line
// as '\n' and "\r\n" do, and becomes '\n' so that goldmark and front
// matter detection read it so too; front matter is blanked (goldmark would
// read it as a thematic break and a setext heading). JSX and, in MDX, HTML
// element lines read as blank (mdx.go).
func parseView(src []byte, mdx bool) []byte {
	v := mdxView(loneCRToLF(src), mdx)
	end := frontMatterEnd(v)
	if end == 0 {
		return v
	}
	if &v[0] == &src[0] {
		v = bytes.Clone(src)
	}
	for i := range end {
		if v[i] != '\n' && v[i] != '\r' {
			v[i] = ' '
		}
	}
	return v
}

// loneCRToLF returns src with every '\r' not followed by '\n' turned into
// '\n': src itself when there is none, else a copy.
func loneCRToLF(src []byte) []byte {
	i := loneCR(src, 0)
	if i < 0 {
		return src
	}
	v := bytes.Clone(src)
	for ; i >= 0; i = loneCR(v, i+1) {
		v[i] = '\n'
	}
	return v
}

// loneCR returns the index of the first '\r' at or after from that no '\n'
// follows, or -1.
func loneCR(src []byte, from int) int {
	for from < len(src) {
		j := bytes.IndexByte(src[from:], '\r')
		if j < 0 {
			return -1
		}
		at := from + j
		if at+1 == len(src) || src[at+1] != '\n' {
			return at
		}
		from = at + 1
	}
	return -1
}

// atxLine tells an ATX heading's line from the first line of a setext
// heading, which may itself start with '#' ("#hashtag" is paragraph text).
var atxLine = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]|$)`)

// frontMatterEnd returns the byte offset just past a YAML front matter block
// at the very start of src, or 0 when there is none. The block must be
// closed: an unclosed "---" is an ordinary thematic break.
func frontMatterEnd(src []byte) int {
	first, rest, ok := bytes.Cut(src, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, " \t\r")) != "---" {
		return 0
	}
	off := len(first) + 1
	for len(rest) > 0 {
		line, next, found := bytes.Cut(rest, []byte("\n"))
		t := string(bytes.TrimRight(line, " \t\r"))
		off += len(line)
		if found {
			off++
		}
		if t == "---" || t == "..." {
			return off
		}
		rest = next
	}
	return 0
}

// lineIndex is where each line of a text starts. It takes 4 bytes a line
// for a text under 4 GiB (all of them: documents are capped far below),
// not 8: a document of ten million blank lines held 80 MB of it.
type lineIndex struct {
	narrow []uint32
	wide   []int // for a larger text
}

// len is the number of lines.
func (x lineIndex) len() int { return len(x.narrow) + len(x.wide) }

// at is where line i (0-based) starts.
func (x lineIndex) at(i int) int {
	if x.wide != nil {
		return x.wide[i]
	}
	return int(x.narrow[i])
}

func lineStarts(src []byte) lineIndex {
	if len(src) == 0 {
		return lineIndex{}
	}
	// A line ends at '\n', or at a '\r' that no '\n' follows.
	n := bytes.Count(src, []byte("\n")) + 1
	if uint64(len(src)) > math.MaxUint32 {
		wide := make([]int, 0, n)
		forLineStarts(src, func(off int) { wide = append(wide, off) })
		return lineIndex{wide: wide}
	}
	narrow := make([]uint32, 0, n)
	forLineStarts(src, func(off int) { narrow = append(narrow, uint32(off)) })
	return lineIndex{narrow: narrow}
}

// forLineStarts calls f with where each line of src starts, in order.
func forLineStarts(src []byte, f func(int)) {
	f(0)
	if bytes.IndexByte(src, '\r') < 0 {
		for i := bytes.IndexByte(src, '\n'); i >= 0 && i+1 < len(src); {
			f(i + 1)
			j := bytes.IndexByte(src[i+1:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
		}
		return
	}
	for i, b := range src {
		if i+1 < len(src) && (b == '\n' || (b == '\r' && src[i+1] != '\n')) {
			f(i + 1)
		}
	}
}

// lineOf maps a byte offset to its 1-indexed line.
func (d *Document) lineOf(off int) int {
	return sort.Search(d.lineStarts.len(), func(i int) bool { return d.lineStarts.at(i) > off })
}

// spanOffsets returns the byte offsets of span(from, to).
func (d *Document) spanOffsets(from, to int) (start, end int) {
	return d.LineStart(from), d.LineStart(to + 1)
}

// LinesText returns lines from..to (1-indexed, inclusive, clamped to the
// document) as one string: the lines' own terminators between them and none
// after the last, the text strings.Join(Lines()[from-1:to], "\n") gives for
// a document with "\n" endings. It shares the document's memory rather than
// copying it, so a caller that needs every section's text (a retrieval
// planner) holds the document once, not once per heading above each line.
func (d *Document) LinesText(from, to int) string {
	from, to = max(from, 1), min(to, d.NumLines())
	if from > to {
		return ""
	}
	start, end := d.spanOffsets(from, to)
	t := d.text[start:end]
	if strings.HasSuffix(t, "\r\n") {
		return t[:len(t)-2]
	}
	if strings.HasSuffix(t, "\n") || strings.HasSuffix(t, "\r") {
		return t[:len(t)-1]
	}
	return t
}

// LinesOnly indexes src's lines and nothing else: no markdown is parsed.
// Extract of line ranges cuts what it cuts from a parsed Document; the
// Document knows no headings, so it is for callers that point by line only.
func LinesOnly(src []byte) *Document {
	s := string(src)
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	return &Document{text: s, src: b, lineStarts: lineStarts(b), passageState: passageState{linesOnly: true}}
}

func (d *Document) lineBytes(src []byte, line int) []byte {
	return bytes.TrimRight(src[d.LineStart(line):d.LineStart(line+1)], "\r\n")
}

// LineStarts is the byte offset in Text of each line's first byte, by the
// document's own line breaks ("\n", "\r\n" or a lone "\r"); LineStarts()[0]
// is line 1. It is made at each call, 8 bytes a line: LineStart and LineOf
// answer without it.
func (d *Document) LineStarts() []int {
	out := make([]int, d.NumLines())
	for i := range out {
		out[i] = d.lineStarts.at(i)
	}
	return out
}

// LineStart is the byte offset in Text of the first byte of line (1-based),
// 0 before the first line and len(Text()) past the last.
func (d *Document) LineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > d.NumLines() {
		return len(d.text)
	}
	return d.lineStarts.at(line - 1)
}

// LineOf is the line (1-based) that holds byte offset off of Text.
func (d *Document) LineOf(off int) int { return d.lineOf(off) }

// NumLines is the number of lines; a final line without a newline counts.
func (d *Document) NumLines() int { return d.lineStarts.len() }

// Text returns the document as given.
func (d *Document) Text() string { return d.text }

// Lines returns the document's lines without their terminators ("\n",
// "\r\n" or a lone "\r"); Lines()[0] is line 1.
func (d *Document) Lines() []string {
	out := make([]string, d.NumLines())
	for i := range out {
		out[i] = string(d.lineBytes(d.src, i+1))
	}
	return out
}

// index builds the matching keys once.
func (d *Document) index() {
	d.indexOnce.Do(func() {
		for i := range d.headings {
			h := &d.headings[i]
			k := keysOf(h.Title)
			h.keys = &k
			if h.name != h.Title {
				h.keys.named = compact(key(h.name))
			}
		}
	})
}

// TopLevelHeadings is how many headings no other heading encloses, counted
// without copying the outline.
func (d *Document) TopLevelHeadings() int {
	n := 0
	for i := range d.headings {
		if len(d.headings[i].anc) == 0 {
			n++
		}
	}
	return n
}

// Outline returns the document's headings in order. The slices are copies;
// callers may keep or change them.
func (d *Document) Outline() []Heading {
	out := make([]Heading, len(d.headings))
	for i, h := range d.headings {
		out[i] = Heading{Level: h.Level, Title: h.Title, Line: h.Line, EndLine: h.EndLine, Path: append([]string(nil), h.Path...), UniquePath: h.UniquePath}
	}
	return out
}

// headingStart is the byte offset of a heading's first line in the parsed
// source, or -1 when goldmark recorded none.
func headingStart(h *ast.Heading) int {
	start := h.Pos()
	if start < 0 && h.Lines().Len() > 0 {
		start = h.Lines().At(0).Start
	}
	return start
}
