package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// Sentinels for the refusals of the allow-list and of the rule that baton
// never writes a file that can be run. Each refusal also wraps
// ErrProtected and writepolicy.ErrDenied, so a caller that branches on
// "baton refused this path" needs no list of reasons.
var (
	// ErrNotDeclared is a path outside the Rules' Write patterns.
	ErrNotDeclared = errors.New("not a path this workflow may write")
	// ErrIgnored is a path in a git-ignored folder that no Write pattern
	// names by its literal segments.
	ErrIgnored = errors.New("in a git-ignored folder")
	// ErrExecutable is a write over a file with an exec bit.
	ErrExecutable = errors.New("is an executable file")
	// ErrSymlink is a path that is, or passes through, a symlink.
	ErrSymlink = errors.New("is or passes through a symlink")
)

// refusal is one refusal of a write: the message a model sees, and the
// sentinel a caller branches on.
type refusal struct {
	msg  string
	kind error
}

func (e *refusal) Error() string { return e.msg }

func (e *refusal) Is(target error) bool {
	return target == e.kind || target == ErrProtected || target == writepolicy.ErrDenied
}

// writePattern is one Write pattern: as given (cleaned), and its literal
// folders, the segments before the first one holding a glob character.
type writePattern struct {
	glob    string
	literal []string
}

// compileWrite checks a Write pattern as compilePattern checks the others.
// A pattern ending in "/" names the folder's contents ("out/" is
// "out/**"). Paths are matched exactly, not in the folded form of key: an
// allow-list only ever accepts the spelling that was declared.
func compileWrite(p string) (writePattern, error) {
	c := strings.TrimPrefix(p, "./")
	if strings.HasSuffix(c, "/") {
		c = strings.TrimRight(c, "/") + "/**"
	}
	switch {
	case c == "" || c == "." || c == "/**":
		return writePattern{}, fmt.Errorf("writes pattern %q: names no path", p)
	case strings.HasPrefix(c, "/"):
		return writePattern{}, fmt.Errorf("writes pattern %q: is absolute; give it relative to the workspace", p)
	case strings.IndexByte(c, 0) >= 0:
		return writePattern{}, fmt.Errorf("writes pattern %q: contains a NUL byte", p)
	}
	segs := strings.Split(c, "/")
	for _, seg := range segs {
		if seg == ".." {
			return writePattern{}, fmt.Errorf("writes pattern %q: leaves the workspace", p)
		}
	}
	if !doublestar.ValidatePattern(c) {
		return writePattern{}, fmt.Errorf("writes pattern %q: %w", p, doublestar.ErrBadPattern)
	}
	c = path.Clean(c)
	wp := writePattern{glob: c}
	for _, seg := range strings.Split(c, "/") {
		if strings.ContainsAny(seg, `*?[{\`) {
			break
		}
		wp.literal = append(wp.literal, seg)
	}
	return wp, nil
}

// declared returns the Write patterns clean (from cleanPath) matches.
func (s *ruleset) declared(clean string) []writePattern {
	var out []writePattern
	for _, p := range s.write {
		if ok, _ := doublestar.Match(p.glob, clean); ok {
			out = append(out, p)
		}
	}
	return out
}

// writesList is the Write patterns as a refusal shows them.
func (s *ruleset) writesList() string {
	if len(s.write) == 0 {
		return "none"
	}
	globs := make([]string, len(s.write))
	for i, p := range s.write {
		globs[i] = p.glob
	}
	return strings.Join(globs, ", ")
}

// checkDeclared refuses clean unless a Write pattern matches it, and, when
// it lies in a git-ignored folder, unless a matching pattern names that
// folder by its literal segments: "out/**" declares a git-ignored out, "**"
// declares no git-ignored folder, since a change there never shows in
// `git diff` and that is where dependency managers keep what they run.
func (w *Workspace) checkDeclared(rel, clean string) error {
	pats := w.rules.declared(clean)
	if len(pats) == 0 {
		return &refusal{kind: ErrNotDeclared, msg: fmt.Sprintf("write %s: %s (writes: %s); declare it in baton.yaml's writes: list",
			rel, ErrNotDeclared, w.rules.writesList())}
	}
	ignored := w.ignored(clean)
	if ignored == "" {
		return nil
	}
	depth := strings.Count(ignored, "/") + 1
	for _, p := range pats {
		if len(p.literal) >= depth {
			return nil
		}
	}
	return &refusal{kind: ErrIgnored, msg: fmt.Sprintf("write %s: %s (git ignores %s), so a change there never shows in git diff; declare the folder by name in baton.yaml's writes: list (%s/**) to write there",
		rel, ErrIgnored, ignored, ignored)}
}

func executable(rel string, mode os.FileMode) error {
	return &refusal{kind: ErrExecutable, msg: fmt.Sprintf("write %s: %s (mode %04o); baton never writes one", rel, ErrExecutable, mode.Perm())}
}
