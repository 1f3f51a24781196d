package runner

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/spill"
	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/llm"
)

// Bounded returns that lose nothing: what does not fit the room a session's
// budget leaves (a tool result, a sub-agent's answer, an external agent's
// output) is written in full to a spill file under the run directory,
// .baton/runs/<id>/spill/, and the model gets the head, the total size and
// a pointer it can page through with read_file's offset and limit.

// maxPagedRead bounds one paged read_file (offset or limit given, or a
// spill file): the file is read whole to find its lines.
const maxPagedRead = 64 << 20

// spillDir is the run's spill folder.
func (r *runner) spillDir() spill.Dir { return spill.New(batondir.At(r.ws.Root()).Spill(r.id)) }

// spillRel is the spill folder as a model names it: workspace-relative,
// slash-separated.
func (r *runner) spillRel() string { return filepath.ToSlash(batondir.Rel.Spill(r.id)) }

// spillView lets a model's read_file read exactly its run's spill folder,
// read-only, while the rest of .baton stays denied: reads under rel are
// served by a workspace rooted at the folder, which confines them there.
type spillView struct {
	rel string // workspace-relative, slash-separated
	dir string // absolute
}

func (r *runner) spillView() *spillView {
	return &spillView{rel: r.spillRel(), dir: batondir.At(r.ws.Root()).Spill(r.id)}
}

// inside returns the path of p inside the spill folder when p names a file
// there.
func (v *spillView) inside(p string) (string, bool) {
	if v == nil {
		return "", false
	}
	c := path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "./"))
	if rest, ok := strings.CutPrefix(c, v.rel+"/"); ok && rest != "" {
		return rest, true
	}
	return "", false
}

func (v *spillView) read(sub string) (string, error) {
	ws, err := workspace.New(v.dir)
	if err != nil {
		return "", fmt.Errorf("read %s: no spill file by that name", path.Join(v.rel, sub))
	}
	defer ws.Close()
	text, err := ws.ReadFile(sub, maxPagedRead)
	if err != nil {
		return "", fmt.Errorf("spill file: %w", err)
	}
	return text, nil
}

// pageLines returns lines offset..offset+limit-1 (counting from 1) of text;
// limit 0 is to the end. A page that is not the whole text says which lines
// it holds.
func pageLines(text string, offset, limit int) (string, error) {
	if offset < 0 || limit < 0 {
		return "", fmt.Errorf("offset and limit count lines and cannot be negative")
	}
	if offset == 0 {
		offset = 1
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if offset > len(lines) {
		return "", fmt.Errorf("offset %d is past the end: the file has %d lines", offset, len(lines))
	}
	end := len(lines)
	if limit > 0 {
		end = min(end, offset-1+limit)
	}
	page := strings.Join(lines[offset-1:end], "")
	if offset == 1 && end == len(lines) {
		return page, nil
	}
	if !strings.HasSuffix(page, "\n") {
		page += "\n"
	}
	return page + fmt.Sprintf("[baton: lines %d–%d of %d]", offset, end, len(lines)), nil
}

// fitResults bounds one tool round's results by what the session's budget
// leaves: the room between the context the next request will have and the
// budget's threshold (never less than a small head, and never more than the
// window less the reply and the ledger request). Results that fit are left
// alone; the rest share the room, smallest first, and each is cut to its
// share with the full text spilled.
func (s *stepRun) fitResults(req *llm.Request, resp *llm.Response, calls []llm.ToolCall, results []llm.ToolResult) []llm.ToolResult {
	w := s.guard()
	if w.size <= 0 || len(results) == 0 {
		return results
	}
	empty := make([]llm.ToolResult, len(results))
	for i, r := range results {
		empty[i] = llm.ToolResult{CallID: r.CallID, IsError: r.IsError}
	}
	next := *req
	next.Messages = llm.AppendToolRound(append([]llm.Message(nil), req.Messages...), resp, empty...)
	base := w.prompt(&next)
	hard := w.size - w.replyReserve(req) - s.ledgerReserve() - base
	soft := s.windowBudget().Threshold() - base
	room := w.toLocal(max(min(hard, max(soft, headFloor(w.size))), 0))

	sizes := make([]int, len(results))
	total := 0
	for i, r := range results {
		sizes[i] = w.countOf(r.Content)
		total += sizes[i]
	}
	if total <= room {
		return results
	}
	// A result no larger than a pointer is kept whole: cutting it would
	// make it longer.
	var big []int
	for i, n := range sizes {
		if n <= minCutTokens {
			room -= n
		} else {
			big = append(big, i)
		}
	}
	bigSizes := make([]int, len(big))
	for k, i := range big {
		bigSizes[k] = sizes[i]
	}
	out := append([]llm.ToolResult(nil), results...)
	for k, share := range shares(bigSizes, room) {
		if i := big[k]; sizes[i] > share {
			out[i].Content = s.spillCut(calls[i], results[i].Content, share)
		}
	}
	return out
}

// minCutTokens is the size below which a result is never cut: about what
// the pointer that would replace it costs.
const minCutTokens = 128

// headFloor is the least room a round's results get even past the
// threshold, so a cut result is still worth reading; the reset then
// happens at the next safe point.
func headFloor(window int) int { return min(window/20, 2048) }

// ledgerReserve is what the ledger side request adds to a session's
// context, kept free so that asking for the entry still fits.
func (s *stepRun) ledgerReserve() int {
	w := s.guard()
	return w.scaled(w.countOf(ledgerTool().PromptText()) + w.countOf(ledgerAsk(s.r.wf.Phases[s.phase].Name)) + messageOverhead)
}

// shares splits room among results of the given sizes, smallest first:
// each gets its size or an equal part of what is left, whichever is less.
func shares(sizes []int, room int) []int {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sizes[idx[a]] < sizes[idx[b]] })
	out := make([]int, len(sizes))
	left := max(room, 0)
	for k, i := range idx {
		out[i] = min(sizes[i], left/(len(idx)-k))
		left -= out[i]
	}
	return out
}

// spillCut keeps text in full in a spill file and returns its head within
// limit tokens, with the pointer. A read_file of a spill file is not spilled
// again: the pointer names the same file at the next line.
func (s *stepRun) spillCut(c llm.ToolCall, text string, limit int) string {
	target, first := "", 1
	if c.Name == toolReadFile {
		var in struct {
			Path   string
			Offset int
		}
		if c.Decode(&in) == nil {
			if sub, ok := s.r.spillView().inside(in.Path); ok {
				target, first = path.Join(s.r.spillRel(), sub), max(in.Offset, 1)
			}
		}
	}
	if target == "" {
		f, err := s.r.spillDir().Write(fmt.Sprintf("%03d-%s", s.seq, c.Name), []byte(text))
		if err != nil {
			s.warn(fmt.Sprintf("a %s result of %d bytes was cut to fit the context and could not be kept: %v", c.Name, len(text), err))
			return cutHead(s.guard().count, text, limit) + fmt.Sprintf("\n[cut by baton: the result of %d bytes did not fit the context and could not be kept in full: %v]", len(text), err)
		}
		target = path.Join(s.r.spillRel(), f.Name)
	}
	return spillHead(s.guard(), text, limit, target, first)
}

// spillHead is the head of text that fits limit tokens with the pointer to
// where the whole text lies (target, text starting at its line first).
func spillHead(w *window, text string, limit int, target string, first int) string {
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	pointer := func(shown int) string {
		page := max(shown, 50)
		return fmt.Sprintf("\n[cut by baton to fit the context: %d of %d lines shown (%d bytes, about %d tokens, in all). The full text is in %s; read on with read_file {\"path\": %q, \"offset\": %d, \"limit\": %d}]",
			shown, lines, len(text), w.countOf(text), target, target, first+shown, page)
	}
	head := cutHead(w.count, text, limit-w.countOf(pointer(lines)))
	return head + pointer(strings.Count(head, "\n"))
}

// cutHead is the longest prefix of text within limit tokens, cut after a
// line when it holds one, so that offsets into the full text stay whole
// lines.
func cutHead(count func(string) int, text string, limit int) string {
	if limit <= 0 {
		return ""
	}
	cut := prefixWithin(count, text, limit)
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		return cut[:i+1]
	}
	return cut
}

// prefixWithin is the longest prefix of text whose count is at most limit,
// found by bisection. A token is at least one byte, so limit bytes always
// fit; the search starts within 8 bytes a token, which spares counting a
// huge text whole.
func prefixWithin(count func(string) int, text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	lo, hi := limit, min(len(text), limit*8)
	if c := count(text[:hi]); c <= limit {
		lo, hi = hi, len(text)
	} else if g := int(int64(hi) * int64(limit) / int64(c)); g > lo {
		// Bracket the cut around where the prefix's density puts it, so
		// that the bisection counts a few short prefixes, not many long
		// ones.
		if a := g - g/20; a > lo && count(text[:a]) <= limit {
			lo = a
		}
		if b := g + g/20 + 16; b < hi && count(text[:b]) > limit {
			hi = b - 1
		}
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(text[:mid]) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cut := text[:lo]
	// Never end inside a multi-byte character.
	for len(cut) > 0 {
		r, size := utf8.DecodeLastRuneInString(cut)
		if r != utf8.RuneError || size > 1 {
			break
		}
		cut = cut[:len(cut)-1]
	}
	return cut
}
