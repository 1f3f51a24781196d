package outline

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sections reads one document's headings into entries. Each heading's own
// text (from its heading line to the line before its first subsection) is
// counted once; a section's size then sums its own count and its
// subsections' sizes, so nested text is never counted again.
func sections(s Source, c Counter) (DocumentInfo, []Entry) {
	text := s.Doc.Text()
	// The document's own line numbering: a lone '\r' ends a line there,
	// and a heading's line number must index the same lines here.
	span := func(from, to int) string { // 1-based, inclusive
		if from > to || from < 1 {
			return ""
		}
		return text[s.Doc.LineStart(from):s.Doc.LineStart(to+1)]
	}
	hs := s.Doc.Outline()
	info := DocumentInfo{Name: s.Name, Lines: s.Doc.NumLines(), Headings: len(hs)}
	if len(hs) > 0 && hs[0].Line > 1 {
		pre := span(1, hs[0].Line-1)
		info.Tokens += c.Count(pre)
		if strings.TrimSpace(pre) != "" {
			info.Preamble = hs[0].Line - 1
		}
	} else if len(hs) == 0 {
		info.Tokens = c.Count(text)
		// Sizes by the outline's own counter, the model's.
		info.Passages = s.Doc.PassagesCounted(c.Count)
	}

	entries := make([]Entry, len(hs))
	parent := make([]int, len(hs))
	own := make([]int, len(hs))
	var stack []int
	seen := map[string]bool{}
	ordinal := map[string]int{}
	for i, h := range hs {
		for len(stack) > 0 && hs[stack[len(stack)-1]].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		parent[i] = -1
		prefix := ""
		if len(stack) > 0 {
			parent[i] = stack[len(stack)-1]
			prefix = entries[parent[i]].Path + Sep
		}
		ownEnd := h.EndLine
		if i+1 < len(hs) && hs[i+1].Line <= h.EndLine {
			ownEnd = hs[i+1].Line - 1
		}
		body := span(h.Line, ownEnd)
		passages, size := largeSectionPassages(s.Doc, body, h.Line, ownEnd, c)
		if passages != nil {
			own[i] = size
		} else {
			own[i] = c.Count(body)
		}
		entries[i] = Entry{
			Document: s.Name,
			Path:     uniquePath(prefix, h.Title, ordinal, seen),
			Title:    h.Title,
			Level:    h.Level,
			Depth:    len(stack) + 1,
			Line:     h.Line,
			EndLine:  h.EndLine,
			Lead:     lead(body),
			Passages: passages,
		}
		stack = append(stack, i)
	}
	for i := len(hs) - 1; i >= 0; i-- {
		entries[i].Tokens += own[i]
		if p := parent[i]; p >= 0 {
			entries[p].Tokens += entries[i].Tokens
			entries[p].subtree += entries[i].subtree + 1
		} else {
			info.Tokens += entries[i].Tokens
		}
	}
	return info, entries
}

// uniquePath joins prefix and title and makes the result unique within the
// document: the n-th heading of the same title under the same parent is
// "Title (n)", and an ordinal that collides with a real heading spelled that
// way moves on to the next free one.
func uniquePath(prefix, title string, ordinal map[string]int, seen map[string]bool) string {
	title = strings.TrimSpace(title)
	if title == "" {
		title = "(untitled)"
	}
	base := prefix + title
	ordinal[normPointer(base)]++
	n := ordinal[normPointer(base)]
	p := base
	if n > 1 {
		p = base + " (" + strconv.Itoa(n) + ")"
	}
	for seen[normPointer(p)] {
		n++
		p = base + " (" + strconv.Itoa(n) + ")"
	}
	seen[normPointer(p)] = true
	return p
}

// leadWords bounds a lead when no sentence ends sooner; leadBytes bounds it
// when the words are long (a URL, a base64 blob).
const (
	privateUse = 0xE000
	leadWords  = 25
	leadBytes  = 200
)

var (
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	underline  = regexp.MustCompile(`^ {0,3}(=+|-+)\s*$`)
	tableRule  = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	blockMark  = regexp.MustCompile(`^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?`)
	image      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	link       = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	refLink    = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	htmlTag    = regexp.MustCompile(`</?[A-Za-z][^>]*(?:>|$)|<!--.*?(?:-->|$)`)
	escaped    = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
	emphasis   = regexp.MustCompile("[*_`~]+")
	sentenceAt = regexp.MustCompile(`[.!?](?:["')\]]*)(?:\s|$)`)
)

// lead returns the first sentence, or the first leadWords words, of a
// section's own text (its heading line skipped), with enough markdown
// stripped to read: list and quote markers, emphasis, links and images
// (their text kept), HTML tags, table pipes. Code blocks are skipped.
func lead(body string) string {
	_, rest, _ := strings.Cut(body, "\n") // the heading line
	var words []string
	inFence := false
	for first := true; rest != "" && len(words) < leadWords; first = false {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		l = strings.TrimRight(l, "\r")
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence || strings.TrimSpace(l) == "" || tableRule.MatchString(l) {
			continue
		}
		if first && underline.MatchString(l) {
			continue // a setext heading's underline
		}
		if strings.HasPrefix(strings.TrimSpace(l), "[") && strings.Contains(l, "]:") {
			continue // a link reference definition
		}
		if len(l) > 4*leadBytes {
			l = l[:4*leadBytes] // a lead needs no more, and regexps on a huge line cost
		}
		l = blockMark.ReplaceAllString(l, "")
		l = image.ReplaceAllString(l, "$1")
		l = link.ReplaceAllString(l, "$1")
		l = refLink.ReplaceAllString(l, "$1")
		l = htmlTag.ReplaceAllString(l, "")
		// An escaped '*' is text, not emphasis: it hides in the private
		// use area while emphasis goes.
		l = escaped.ReplaceAllStringFunc(l, func(m string) string { return string(rune(privateUse + int(m[1]))) })
		l = emphasis.ReplaceAllString(l, "")
		l = strings.Map(func(r rune) rune {
			if r >= privateUse && r < privateUse+128 {
				return r - privateUse
			}
			return r
		}, l)
		l = strings.ReplaceAll(l, "|", " ")
		for _, w := range strings.Fields(l) {
			words = append(words, w)
			if len(words) >= leadWords || ends(w) && len(words) >= 3 {
				return clip(strings.Join(words, " "), len(words) >= leadWords && !ends(w))
			}
		}
		if len(strings.Join(words, " ")) > leadBytes {
			break
		}
	}
	return clip(strings.Join(words, " "), false)
}

func ends(w string) bool { return sentenceAt.MatchString(w) }

// clip bounds a lead to leadBytes on a rune boundary and marks a cut.
func clip(s string, cut bool) string {
	if len(s) > leadBytes {
		s = s[:leadBytes]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		cut = true
	}
	if cut {
		s += "…"
	}
	return s
}
