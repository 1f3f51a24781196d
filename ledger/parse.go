package ledger

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/baton-dev/baton/internal/textclip"
)

// Problem is a part of a ledger file that could not be read as the format
// says: a bad entry heading, a duplicated field, text where a bullet belongs.
type Problem struct {
	Path string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg) }

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	// entryStart recognises a heading meant as an entry, so that a wrong one
	// is reported rather than silently skipped; "## Ledger" alone is a title.
	entryStart   = regexp.MustCompile(`(?i)^ledger\s*(?:—|–|-)`)
	entryHeading = regexp.MustCompile(`^Ledger\s+(?:—|–|--?)\s+(.+?)\s+(?:—|–|--?)\s+(\S+)$`)
	bullet       = regexp.MustCompile(`^ {0,3}[-*+](?:[ \t]+(.*))?$`)
	evidenceSep  = regexp.MustCompile(`(?i)\s+(?:—|–|--?)\s*evidence:\s*`)
	fenceOpen    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
)

// fieldByName maps a ### heading, lower-cased and without a trailing colon,
// to its field.
var fieldByName = func() map[string]string {
	m := make(map[string]string, len(Fields))
	for _, f := range Fields {
		m[strings.ToLower(f)] = f
	}
	return m
}()

// Parse reads the entries of a ledger. Text around the entries is ignored.
// An entry whose heading cannot be read is skipped and reported as a problem
// at its line; an entry lacking a field is returned with the field in Absent
// (so Validate reports it). path is used in problems and entries only. The
// error is for data that is not text at all.
func Parse(data []byte, path string) ([]Entry, []Problem, error) {
	if !utf8.Valid(data) {
		return nil, nil, fmt.Errorf("ledger %s: %w: not UTF-8 text", path, ErrMalformed)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, nil, fmt.Errorf("ledger %s: %w: binary data (NUL byte)", path, ErrMalformed)
	}
	p := &parser{path: path}
	lines := strings.Split(string(data), "\n")
	for i, ln := range lines {
		p.line(i+1, strings.TrimSuffix(ln, "\r"))
	}
	p.endEntry()
	return p.entries, p.problems, nil
}

type parser struct {
	path     string
	entries  []Entry
	problems []Problem

	fence string // the open code fence's marker, "" outside one

	cur       *Entry
	seen      map[string]bool
	field     string // the field whose content is being read; "" for none
	skipField bool   // inside an unknown or duplicated ### section
	text      []string
	items     []string
	itemLines []int
}

func (p *parser) problem(line int, format string, a ...any) {
	p.problems = append(p.problems, Problem{Path: p.path, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (p *parser) line(n int, ln string) {
	if p.fence != "" {
		if t := strings.TrimSpace(ln); strings.HasPrefix(t, p.fence) && strings.Trim(t, p.fence[:1]) == "" {
			p.fence = ""
		}
		p.content(n, ln)
		return
	}
	if m := fenceOpen.FindStringSubmatch(ln); m != nil {
		p.fence = m[1]
		p.content(n, ln)
		return
	}
	m := atxHeading.FindStringSubmatch(ln)
	if m == nil {
		p.content(n, ln)
		return
	}
	level, title := len(m[1]), strings.TrimSpace(m[2])
	switch {
	case level <= 2:
		p.endEntry()
		if level == 2 && entryStart.MatchString(title) {
			p.startEntry(n, title)
		}
	case level == 3 && p.cur != nil:
		p.endField()
		name := strings.ToLower(strings.TrimSuffix(title, ":"))
		f, ok := fieldByName[strings.Join(strings.Fields(name), " ")]
		switch {
		case !ok:
			// Unknown sections are the writer's own notes; skip them. A
			// misspelt field still shows up, as absent, when validating.
			p.skipField = true
		case p.seen[f]:
			p.problem(n, "field %q appears twice in the entry; the first one counts", f)
			p.skipField = true
		default:
			p.seen[f] = true
			p.field = f
		}
	default:
		p.content(n, ln)
	}
}

func (p *parser) startEntry(n int, title string) {
	m := entryHeading.FindStringSubmatch(title)
	if m == nil {
		p.problem(n, "entry heading must read \"## Ledger — <phase> — <RFC 3339 time>\", got %q", textclip.Runes(title, 80))
		return
	}
	t, err := time.Parse(time.RFC3339Nano, m[2])
	if err != nil {
		p.problem(n, "entry heading time %q is not an RFC 3339 time like 2026-11-30T07:00:00Z", textclip.Runes(m[2], 40))
		return
	}
	p.cur = &Entry{Phase: m[1], Time: t, Path: p.path, Line: n}
	p.seen = map[string]bool{}
}

func (p *parser) content(n int, ln string) {
	if p.cur == nil || p.field == "" || p.skipField {
		return
	}
	if !isList(p.field) {
		if t := strings.TrimSpace(ln); t != "" {
			p.text = append(p.text, t)
		}
		return
	}
	if strings.TrimSpace(ln) == "" {
		return
	}
	if m := bullet.FindStringSubmatch(ln); m != nil {
		p.items = append(p.items, strings.TrimSpace(m[1]))
		p.itemLines = append(p.itemLines, n)
		return
	}
	t := strings.TrimSpace(ln)
	switch {
	case len(p.items) > 0 && (ln[0] == ' ' || ln[0] == '\t'):
		p.items[len(p.items)-1] += "\n" + t
	case len(p.items) == 0 && strings.EqualFold(t, none):
		p.items = append(p.items, none)
		p.itemLines = append(p.itemLines, n)
	default:
		p.problem(n, "%q is a list of \"- \" bullets; this line is not one", p.field)
	}
}

func isList(field string) bool { return field != FieldCurrentPhase && field != FieldNextStep }

func (p *parser) endField() {
	defer func() {
		p.field, p.skipField, p.text, p.items, p.itemLines = "", false, nil, nil, nil
	}()
	if p.cur == nil || p.field == "" || p.skipField {
		return
	}
	e := p.cur
	text := strings.Join(p.text, "\n")
	items := p.items
	if len(items) == 1 && strings.EqualFold(items[0], none) {
		items = nil
	}
	for i, it := range items {
		if it == "" {
			p.problem(p.itemLines[i], "empty bullet in %q", p.field)
		}
	}
	switch p.field {
	case FieldFrozenDecisions:
		e.FrozenDecisions = items
	case FieldArtifacts:
		e.Artifacts = items
	case FieldOpenTickets:
		e.OpenTickets = items
	case FieldCurrentPhase:
		e.CurrentPhase = noneToEmpty(text)
	case FieldNextStep:
		e.NextStep = noneToEmpty(text)
	case FieldDoneSoFar:
		for _, it := range items {
			e.DoneSoFar = append(e.DoneSoFar, splitEvidence(it))
		}
	}
}

func noneToEmpty(s string) string {
	if strings.EqualFold(strings.TrimSpace(s), none) {
		return ""
	}
	return s
}

// splitEvidence cuts a Done so far item at its last "— evidence:" marker.
func splitEvidence(s string) Item {
	locs := evidenceSep.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return Item{Text: s}
	}
	l := locs[len(locs)-1]
	return Item{Text: strings.TrimSpace(s[:l[0]]), Evidence: strings.TrimSpace(s[l[1]:])}
}

func (p *parser) endEntry() {
	p.endField()
	if p.cur == nil {
		return
	}
	for _, f := range Fields {
		if !p.seen[f] {
			p.cur.Absent = append(p.cur.Absent, f)
		}
	}
	p.entries = append(p.entries, *p.cur)
	p.cur, p.seen = nil, nil
}
