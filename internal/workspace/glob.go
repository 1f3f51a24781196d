package workspace

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// ErrBadPattern is wrapped when a glob given to List or Search is not well
// formed: an unclosed [ or {, or a \ at its end.
var ErrBadPattern = errors.New("invalid glob pattern")

// maxAlternatives bounds the patterns one glob's {a,b} groups expand to.
// Real globs have a handful ("**/*.{ts,tsx,js,jsx}" has four); the bound
// keeps "{a,b}{a,b}…" from costing a walk thousands of matches per file.
const maxAlternatives = 64

// IsGlob reports whether p holds glob syntax (*, ?, [ or {) rather than
// naming one path.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[{") }

// glob is a List or Search pattern compiled: the brace-free alternatives it
// expands to, each cleaned and split into segments. Which files match is
// decided by doublestar on whole paths; the segments only let the walk skip
// folders that cannot hold a match, and find where it can start.
type glob struct {
	alts    []string   // brace-free patterns, cleaned
	segs    [][]string // alts split at "/"
	literal map[string]bool
	base    []string // leading literal folders every alternative shares
}

// compileGlob reads pattern: doublestar syntax (*, ?, [class], {a,b}, and
// ** as a whole segment for any number of folders), relative to the
// workspace, with forward or (on Windows) back slashes. An empty pattern is
// "**".
func compileGlob(pattern string) (*glob, error) {
	if err := writepolicy.CheckLimits(pattern); err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	slashed := filepath.ToSlash(pattern)
	if strings.HasPrefix(slashed, "/") {
		return nil, fmt.Errorf("pattern %q is absolute: %w", pattern, ErrOutsideWorkspace)
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, fmt.Errorf("pattern %q contains a NUL byte", pattern)
	}
	pat := strings.Trim(slashed, "/")
	if pat == "" || path.Clean(pat) == "." {
		pat = "**" // "" and "." list the whole workspace
	}
	if !doublestar.ValidatePattern(pat) {
		return nil, fmt.Errorf("pattern %q: %w (check that every [ and { is closed and that it does not end in \\)", pattern, ErrBadPattern)
	}
	alts, ok := expandBraces(pat, maxAlternatives)
	if !ok {
		return nil, fmt.Errorf("pattern %q: %w: its {…} groups make more than %d alternatives", pattern, ErrBadPattern, maxAlternatives)
	}
	g := &glob{literal: map[string]bool{}}
	seen := map[string]bool{}
	for _, a := range alts {
		if strings.HasPrefix(a, "/") {
			return nil, fmt.Errorf("pattern %q is absolute: %w", pattern, ErrOutsideWorkspace)
		}
		// "./docs//*.md" and "docs/../docs/*.md" name the same files as
		// "docs/*.md", and results should read the same way.
		a = path.Clean(strings.Trim(a, "/"))
		if a == "." {
			continue // an empty alternative ("{,x}") names the root, which is no file
		}
		segs := strings.Split(a, "/")
		for _, s := range segs {
			if s == ".." {
				return nil, fmt.Errorf("pattern %q: %w", pattern, ErrOutsideWorkspace)
			}
			if !hasMeta(s) {
				g.literal[s] = true
			}
		}
		if !seen[a] {
			seen[a] = true
			g.alts = append(g.alts, a)
			g.segs = append(g.segs, segs)
		}
	}
	g.base = commonBase(g.segs)
	return g, nil
}

// commonBase is the longest run of leading literal folders all
// alternatives share; a walk starts there. The last segment always stays
// a pattern, so "docs/b.md" starts at docs.
func commonBase(alts [][]string) []string {
	if len(alts) == 0 {
		return nil
	}
	first := alts[0]
	n := 0
	for ; n < len(first)-1 && !hasMeta(first[n]) && first[n] != "**"; n++ {
		same := true
		for _, a := range alts[1:] {
			if n >= len(a)-1 || a[n] != first[n] {
				same = false
				break
			}
		}
		if !same {
			break
		}
	}
	return first[:n:n]
}

// expandBraces expands p's {a,b} groups, nested ones included, into
// brace-free patterns; ok is false when there would be more than limit.
// A backslash escapes the next byte, as it does in doublestar.
func expandBraces(p string, limit int) (out []string, ok bool) {
	open := -1
	for i := 0; i < len(p) && open < 0; i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			open = i
		}
	}
	if open < 0 {
		return []string{p}, limit >= 1
	}
	depth, end := 0, -1
	var cuts []int
	for i := open + 1; i < len(p) && end < 0; i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth == 0 {
				end = i
			} else {
				depth--
			}
		case ',':
			if depth == 0 {
				cuts = append(cuts, i)
			}
		}
	}
	if end < 0 {
		return nil, false // validated before; kept for safety
	}
	start := open + 1
	for _, cut := range append(cuts, end) {
		more, ok := expandBraces(p[:open]+p[start:cut]+p[end+1:], limit-len(out))
		if !ok {
			return nil, false
		}
		out = append(out, more...)
		start = cut + 1
	}
	return out, true
}

// match reports whether the workspace-relative path rel matches.
func (g *glob) match(rel string) bool {
	for _, a := range g.alts {
		if doublestar.MatchUnvalidated(a, rel) {
			return true
		}
	}
	return false
}

// couldHold reports whether the folder with path segments dir could hold a
// match, so the walk can skip folders that cannot.
func (g *glob) couldHold(dir []string) bool {
	for _, segs := range g.segs {
		if prefixMatches(segs, dir) {
			return true
		}
	}
	return false
}

func prefixMatches(pat, dir []string) bool {
	for i, s := range dir {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if !doublestar.MatchUnvalidated(pat[i], s) {
			return false
		}
	}
	return len(dir) < len(pat)
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }
