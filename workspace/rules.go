package workspace

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Rules name workspace paths the tools may not touch. Patterns are doublestar globs
// relative to the workspace root with forward slashes; a pattern that matches a folder
// covers everything under it. Matching ignores case, so .GIT/config is .git/config.
type Rules struct {
	Deny     []string // never read, listed, searched or written
	ReadOnly []string // may be read, listed and searched; never written
}

// ErrProtected is wrapped by every error for a path the Rules forbid.
var ErrProtected = errors.New("protected by baton")

// protectedHint follows ErrProtected in the error a model sees, so it
// knows not to try another spelling of the same path.
const protectedHint = " (baton's own files, the workflow, skills and the paths in baton.yaml's protect: list are off limits)"

func protected(op, rel string) error {
	return fmt.Errorf("%s %s: %w%s", op, rel, ErrProtected, protectedHint)
}

// alwaysDenied holds what no rules can open up: git's own files, through
// which a write could change what git runs (hooks, config).
var alwaysDenied = []string{"**/.git"}

// defaultRules is what New applies.
var defaultRules = &ruleset{deny: alwaysDenied}

// ruleset is Rules compiled: patterns normalised as paths are (see key).
type ruleset struct {
	deny, readOnly []string
}

// Restrict returns a Workspace sharing w's root with r applied (replacing earlier rules). A bad pattern is an error naming it.
func (w *Workspace) Restrict(r Rules) (*Workspace, error) {
	rs := &ruleset{deny: append([]string(nil), alwaysDenied...)}
	for _, list := range []struct {
		in  []string
		out *[]string
	}{{r.Deny, &rs.deny}, {r.ReadOnly, &rs.readOnly}} {
		for _, p := range list.in {
			c, err := compilePattern(p)
			if err != nil {
				return nil, err
			}
			*list.out = append(*list.out, c)
		}
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

// key is the form paths and patterns are compared in: lower case, and each
// segment without the trailing dots and spaces Windows ignores, so neither
// .GIT/config nor "baton.yaml." names a different file than the rules do.
func key(p string) string {
	segs := strings.Split(strings.ToLower(p), "/")
	for i, s := range segs {
		if t := strings.TrimRight(s, ". "); t != "" {
			segs[i] = t
		}
	}
	return strings.Join(segs, "/")
}

func matchAny(pats []string, k string) bool {
	for _, p := range pats {
		if ok, _ := doublestar.Match(p, k); ok {
			return true
		}
	}
	return false
}

// underAny reports whether rel or a folder above it matches one of pats.
func underAny(pats []string, rel string) bool {
	if rel == "." || len(pats) == 0 {
		return false
	}
	k := key(rel)
	for i := 0; i <= len(k); i++ {
		if (i == len(k) || k[i] == '/') && matchAny(pats, k[:i]) {
			return true
		}
	}
	return false
}

// deniesExactly reports whether rel itself is denied; a walk that checks
// every location it passes covers the folders above.
func (s *ruleset) deniesExactly(rel string) bool {
	return rel != "." && matchAny(s.deny, key(rel))
}

// denies reports whether rel or a folder above it is denied.
func (s *ruleset) denies(rel string) bool { return underAny(s.deny, rel) }

// forbidsWrite reports whether rel may not be written.
func (s *ruleset) forbidsWrite(rel string) bool {
	return underAny(s.deny, rel) || underAny(s.readOnly, rel)
}
