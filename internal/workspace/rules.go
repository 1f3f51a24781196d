package workspace

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// Rules name workspace paths the tools may not touch, beyond what baton's
// write policy (package writepolicy) denies in every workspace. Patterns
// are doublestar globs relative to the workspace root with forward slashes;
// a pattern that matches a folder covers everything under it. Matching
// compares paths as the write policy does, so .GIT/config is .git/config.
//
// Write is the allow-list: the only paths that may be written, matched
// exactly as declared (see compileWrite). A Workspace with no Write
// patterns writes nothing. Deny, ReadOnly and the write policy still hold
// inside them.
type Rules struct {
	Deny     []string // never read, listed, searched or written
	ReadOnly []string // may be read, listed and searched; never written
	Write    []string // the only paths that may be written
}

// ErrProtected is wrapped by every error for a path the Rules or the write
// policy forbid; the error wraps writepolicy.ErrDenied too.
var ErrProtected = errors.New("protected by baton")

// protectedHint follows ErrProtected in the error a model sees, so it
// knows not to try another spelling of the same path.
const protectedHint = " (baton's own files, git's, the workflow, skills, host, editor, hook and CI configuration and the paths in baton.yaml's protect: list are off limits)"

// protectedErr is a refusal: ErrProtected for this package's callers,
// writepolicy.ErrDenied for those that check every entry point alike.
type protectedErr struct{ msg string }

func (e *protectedErr) Error() string { return e.msg }

func (e *protectedErr) Is(target error) bool {
	return target == ErrProtected || target == writepolicy.ErrDenied
}

func protected(op, rel string) error {
	return &protectedErr{msg: fmt.Sprintf("%s %s: %s%s", op, rel, ErrProtected, protectedHint)}
}

// defaultRules is what New applies: the write policy, and no path
// declared writable.
var defaultRules = &ruleset{}

// ruleset is Rules compiled: patterns normalised as paths are (see key).
// What the write policy denies is denied whatever the patterns say.
type ruleset struct {
	deny, readOnly []pattern
	write          []writePattern
}

// Restrict returns a Workspace sharing w's root with r applied (replacing earlier rules). A bad pattern is an error naming it.
func (w *Workspace) Restrict(r Rules) (*Workspace, error) {
	rs := &ruleset{}
	for _, list := range []struct {
		in  []string
		out *[]pattern
	}{{r.Deny, &rs.deny}, {r.ReadOnly, &rs.readOnly}} {
		for _, p := range list.in {
			c, err := compilePattern(p)
			if err != nil {
				return nil, err
			}
			*list.out = append(*list.out, newPattern(c))
		}
	}
	for _, p := range r.Write {
		c, err := compileWrite(p)
		if err != nil {
			return nil, err
		}
		rs.write = append(rs.write, c)
	}
	return &Workspace{dir: w.dir, root: w.root, rules: rs}, nil
}

func compilePattern(p string) (string, error) {
	c := strings.TrimPrefix(strings.TrimRight(p, "/"), "./")
	switch {
	case c == "" || c == ".":
		return "", fmt.Errorf("protect pattern %q: names no path", p)
	case strings.HasPrefix(c, "/"):
		return "", fmt.Errorf("protect pattern %q: is absolute; give it relative to the workspace", p)
	case strings.IndexByte(c, 0) >= 0:
		return "", fmt.Errorf("protect pattern %q: contains a NUL byte", p)
	}
	for _, seg := range strings.Split(c, "/") {
		if seg == ".." {
			return "", fmt.Errorf("protect pattern %q: leaves the workspace", p)
		}
	}
	if !doublestar.ValidatePattern(c) {
		return "", fmt.Errorf("protect pattern %q: %w", p, doublestar.ErrBadPattern)
	}
	return key(path.Clean(c)), nil
}

// key is the form paths and patterns are compared in: each segment as the
// write policy compares it (case, Unicode normalisation, the trailing dots
// and spaces Windows ignores), so neither .GIT/config nor "baton.yaml."
// names a different file than the rules do. Patterns are split only at
// "/", since "\\" escapes in a glob.
func key(p string) string {
	var k keyPath
	for {
		seg, rest, more := strings.Cut(p, "/")
		k.push(seg)
		if !more {
			return k.String()
		}
		p = rest
	}
}

// matchAny reports whether k, a key of depth segments, matches one of
// pats.
func matchAny(pats []pattern, k string, depth int) bool {
	for _, p := range pats {
		if !p.applies(depth) {
			continue
		}
		if ok, _ := doublestar.Match(p.glob, k); ok {
			return true
		}
	}
	return false
}

// underAny reports whether rel or a folder above it matches one of pats.
// Each prefix is matched only by the patterns that can match its depth;
// the path limits bound the rest.
func underAny(pats []pattern, rel string) bool {
	if rel == "." || len(pats) == 0 {
		return false
	}
	k := key(rel)
	depth := 0
	for i := 0; i <= len(k); i++ {
		if i < len(k) && k[i] != '/' {
			continue
		}
		depth++
		if matchAny(pats, k[:i], depth) {
			return true
		}
	}
	return false
}

// deniesExactly reports whether rel itself is denied; a walk that checks
// every location it passes covers the folders above.
func (s *ruleset) deniesExactly(rel string) bool {
	if rel == "." {
		return false
	}
	_, policy := writepolicy.ReadFamily(rel)
	return policy || (len(s.deny) > 0 && matchAny(s.deny, key(rel), strings.Count(rel, "/")+1))
}

// deniesAt reports whether the location k ends at is denied, its folders
// above having been checked as the walk passed them: the write policy is
// asked about the last segment alone.
func (s *ruleset) deniesAt(k *keyPath) bool {
	if _, policy := writepolicy.SegmentReadFamily(k.last); policy {
		return true
	}
	return len(s.deny) > 0 && matchAny(s.deny, k.String(), k.depth())
}

// denies reports whether rel or a folder above it is denied.
func (s *ruleset) denies(rel string) bool {
	if _, policy := writepolicy.ReadFamily(rel); policy && rel != "." {
		return true
	}
	return underAny(s.deny, rel)
}

// forbidsWrite reports whether rel may not be written.
func (s *ruleset) forbidsWrite(rel string) bool {
	if _, policy := writepolicy.WriteFamily(rel); policy && rel != "." {
		return true
	}
	return underAny(s.deny, rel) || underAny(s.readOnly, rel)
}
