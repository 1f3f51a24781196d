package orchestrate

import (
	"context"
	"strings"
	"sync"
	"unsafe"

	"github.com/baton-dev/baton/tokens"
)

// Counting the run's largest text once. The whole context turns up in the
// record's context figure, in the single-call and naive baselines, in the
// full planner's prompt and in every subtask that falls back to it; each was
// a tokenization of the whole (a dry run over 10 MB counted it five times,
// two CPU-seconds each). It is counted once, as a tokens.Counted, and every
// prompt that holds it is counted as its wrapping plus that figure
// (tokens.Counted.Wrapped, exact: it recounts the wrapping and the
// context's first and last lines).
//
// The count is indexed (tokens.Counter.Indexed): the outline's sections,
// map-reduce's lines and parts and each map request's block are parts of
// the context, and their counts come from the index with only their ends
// read, where each was a reading of the whole document again. So
// everything that counts parts of the context is handed ctxCounter, and the
// texts it counts are views of the context, not copies.

// textCounts is the run's counting cache; the zero value is ready.
type textCounts struct {
	once    sync.Once
	context tokens.Counted
	// last is the last large text outside the context that ctxCounter
	// counted: the outline, which the outline planner's prompt then holds.
	mu   sync.Mutex
	last tokens.Counted
}

// minReuse is the size below which a text is simply counted again: finding
// it inside a prompt would cost more than counting it.
const minReuse = 4 << 10

// countContext counts the run's whole context, unless it was counted
// already, and stops early when ctx is done, returning its error.
func (r *run) countContext(ctx context.Context) error {
	var err error
	r.counts.once.Do(func() { r.counts.context, err = r.cfg.Counter.IndexedContext(ctx, r.cfg.Context) })
	return err
}

// contextCounted is the run's whole context, counted on first use.
func (r *run) contextCounted() tokens.Counted {
	r.counts.once.Do(func() { r.counts.context = r.cfg.Counter.Indexed(r.cfg.Context) })
	return r.counts.context
}

// ctxCounter counts any text as r.cfg.Counter does, and a part of the
// context (the same memory) from the context's index. It keeps the count
// of the last large text it counted that is not part of the context (the
// rendered outline), so that the prompt holding it is counted as the
// prompt's own text plus that count (see promptTokens).
func (r *run) ctxCounter() runCounter { return runCounter{r} }

// runCounter is what ctxCounter returns; it is an outline.Counter and a
// mapreduce.Breaker.
type runCounter struct{ r *run }

func (c runCounter) Count(s string) int {
	ct := c.r.contextCounted()
	if len(s) < minReuse || ct.Holds(s) {
		return ct.Count(s)
	}
	k := c.r.cfg.Counter.Counted(s)
	c.r.counts.mu.Lock()
	c.r.counts.last = k
	c.r.counts.mu.Unlock()
	return k.Tokens()
}

func (c runCounter) CleanBreak(s string, at int) bool {
	return c.r.contextCounted().CleanBreak(s, at)
}

// Wrapped3 counts prefix + s + suffix, s from the context's index when it
// is a part of the context.
func (c runCounter) Wrapped3(prefix, s, suffix string) int {
	return c.r.contextCounted().Wrapped3(prefix, s, suffix)
}

// lastCounted is the last large text counted by ctxCounter outside the
// context, if s holds it: at is where.
func (r *run) lastCounted(s string) (k tokens.Counted, at int, ok bool) {
	r.counts.mu.Lock()
	k = r.counts.last
	r.counts.mu.Unlock()
	t := k.Text()
	if len(t) < minReuse || len(s) < len(t) {
		return k, 0, false
	}
	at = strings.Index(s, t)
	return k, at, at >= 0
}

// counted counts a slice; a slice that is the whole context (a fallback)
// takes the context's count.
func (r *run) counted(text string) tokens.Counted {
	if isContext(text, r.cfg.Context) {
		return r.contextCounted()
	}
	// A slice that is one cut of the context shares its memory and is
	// counted from the context's index.
	return r.contextCounted().Sub(text)
}

// isContext reports whether text is ctx: the same bytes (the assembler hands
// back the context itself) or an equal copy.
func isContext(text, ctx string) bool {
	if len(text) != len(ctx) || len(ctx) < minReuse {
		return false
	}
	return unsafe.StringData(text) == unsafe.StringData(ctx) || text == ctx
}

// contextBlockWrap is what contextBlock puts around a text.
func contextBlockWrap(text string) (prefix, suffix string) {
	if strings.HasSuffix(text, "\n") {
		return "<context>\n", "</context>\n\n"
	}
	return "<context>\n", "\n</context>\n\n"
}

// blockTokens counts contextBlock of a counted text without counting the
// text again.
func (r *run) blockTokens(c tokens.Counted) int {
	p, s := contextBlockWrap(c.Text())
	return c.Wrapped(p, s)
}

// promptTokens counts one system prompt or message. One that holds the
// whole context verbatim (the full planner's prompt, its repair round) is
// counted as the text around the context plus the context's count, and
// one that holds the outline just counted (the outline planner's) as the
// text around it plus its count.
func (r *run) promptTokens(s string) int {
	ctx := r.cfg.Context
	if len(ctx) < minReuse || len(s) < len(ctx) {
		if k, at, ok := r.lastCounted(s); ok {
			return k.Wrapped(s[:at], s[at+len(k.Text()):])
		}
		return r.cfg.Counter.Count(s)
	}
	probe := ctx[:256]
	for from := 0; from+len(ctx) <= len(s); {
		i := strings.Index(s[from:], probe)
		if i < 0 {
			break
		}
		at := from + i
		if at+len(ctx) > len(s) {
			break
		}
		if s[at:at+len(ctx)] == ctx {
			return r.contextCounted().Wrapped(s[:at], s[at+len(ctx):])
		}
		from = at + 1
	}
	return r.cfg.Counter.Count(s)
}
