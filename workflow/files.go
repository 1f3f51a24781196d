package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/baton-dev/baton/internal/workspace"
)

// The tags of the block in which a skill body declares the files its step
// reads. Matching ignores case, since skills are written by hand.
const (
	openTag  = "<files_to_read>"
	closeTag = "</files_to_read>"
)

// ErrFilesToRead is wrapped when a skill body's <files_to_read> block is
// malformed (an opening tag with no closing one, or the reverse).
var ErrFilesToRead = errors.New("malformed <files_to_read> block")

// maxPatterns bounds the declarations read from one body, so a runaway
// block cannot turn into thousands of globs.
const maxPatterns = 200

// FilesToRead returns the paths and globs a skill body declares in its
// <files_to_read> blocks, in order, without duplicates. A tag counts only at
// the start of a line, so prose that mentions "the <files_to_read> block"
// declares nothing; the closing tag may end a line's content, which allows
// the one-line form <files_to_read>a.md</files_to_read>. Each non-blank line
// inside holds one path or glob; markdown bullets ("- ", "* ", "+ ", "1. "),
// surrounding backticks or quotes, and a trailing description after " — ",
// " -- " or " #" are dropped, and lines starting with "#" or "//" are
// comments. A body may hold several blocks; none means no files.
func FilesToRead(body string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(line string) error {
		p := cleanDeclaration(line)
		if p == "" || seen[p] {
			return nil
		}
		if len(out) == maxPatterns {
			return fmt.Errorf("%w: more than %d entries", ErrFilesToRead, maxPatterns)
		}
		seen[p] = true
		out = append(out, p)
		return nil
	}
	inside, opened := false, 0
	for n, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if !inside {
			if hasPrefixFold(trimmed, closeTag) {
				return nil, fmt.Errorf("%w: line %d: %s without %s", ErrFilesToRead, n+1, closeTag, openTag)
			}
			if !hasPrefixFold(trimmed, openTag) {
				continue
			}
			inside, opened = true, n+1
			trimmed = trimmed[len(openTag):]
		} else if hasPrefixFold(trimmed, openTag) {
			return nil, fmt.Errorf("%w: line %d: %s opened again before %s", ErrFilesToRead, n+1, openTag, closeTag)
		}
		if i := indexFold(trimmed, closeTag); i >= 0 {
			if err := add(trimmed[:i]); err != nil {
				return nil, err
			}
			inside = false
			continue
		}
		if err := add(trimmed); err != nil {
			return nil, err
		}
	}
	if inside {
		return nil, fmt.Errorf("%w: the %s on line %d is never closed with %s", ErrFilesToRead, openTag, opened, closeTag)
	}
	return out, nil
}

// hasPrefixFold is strings.HasPrefix ignoring case. Comparing bytes of the
// original text, rather than searching a lower-cased copy, keeps indexes
// valid when lower-casing changes a rune's length.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// indexFold is strings.Index ignoring case, for an ASCII sub.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// cleanDeclaration reduces one line of a <files_to_read> block to the path
// or glob it names, or "".
func cleanDeclaration(line string) string {
	s := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "```") {
		return ""
	}
	for _, b := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(s, b) {
			s = strings.TrimSpace(s[len(b):])
			break
		}
	}
	if n := numberedPrefix(s); n > 0 {
		s = strings.TrimSpace(s[n:])
	}
	// `path` — why: the quoted part is the path, the rest is prose.
	for _, q := range []string{"`", `"`, "'"} {
		if strings.HasPrefix(s, q) {
			if end := strings.Index(s[1:], q); end >= 0 {
				return strings.TrimSpace(s[1 : 1+end])
			}
		}
	}
	for _, sep := range []string{" — ", " – ", " -- ", " #", "\t#"} {
		if i := strings.Index(s, sep); i >= 0 {
			s = s[:i]
		}
	}
	return strings.TrimSpace(s)
}

// numberedPrefix returns the length of a "12. " or "12) " list marker, or 0.
func numberedPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return 0
	}
	return i + 2
}

// Match is the expansion of one declared pattern.
type Match struct {
	Pattern string
	Paths   []string // workspace-relative, sorted; empty when nothing matched
	// Problem says why nothing was read for the pattern ("not found",
	// "outside the workspace", ...); empty when Paths is not.
	Problem string
}

// Expand resolves declared patterns inside ws. A pattern without glob
// characters is a single path; one with them (*, ?, [class], {a,b}) is
// expanded with workspace.List. Missing files and refused paths are reported in the
// matches rather than failing, since a step can still run and should be
// told what it does not have.
func Expand(ws *workspace.Workspace, patterns []string) []Match {
	out := make([]Match, 0, len(patterns))
	for _, pat := range patterns {
		m := Match{Pattern: pat}
		if !workspace.IsGlob(pat) {
			m.Paths, m.Problem = expandLiteral(ws, pat)
		} else {
			paths, err := ws.List(pat)
			switch {
			case err != nil && !errors.Is(err, workspace.ErrTruncated):
				m.Problem = problem(err)
			case len(paths) == 0:
				m.Problem = "no file matches"
			default:
				m.Paths = paths
				if err != nil {
					m.Problem = fmt.Sprintf("only the first %d matches are used", len(paths))
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func expandLiteral(ws *workspace.Workspace, pat string) ([]string, string) {
	abs, err := ws.Resolve(pat)
	if err != nil {
		return nil, problem(err)
	}
	if _, err := ws.Rel(abs); err != nil {
		return nil, problem(err)
	}
	// Keep the path as declared (cleaned), not the symlink target, so the
	// step sees the name its skill used.
	rel := strings.TrimPrefix(cleanSlash(pat), "./")
	return []string{rel}, ""
}

func cleanSlash(p string) string {
	parts := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
	var out []string
	for _, s := range parts {
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

// problem turns an error into the short phrase a context reports.
func problem(err error) string {
	switch {
	case errors.Is(err, workspace.ErrOutsideWorkspace):
		return "refused: outside the workspace"
	case errors.Is(err, workspace.ErrBadPattern):
		return "invalid glob pattern (every [ and { must be closed)"
	case errors.Is(err, workspace.ErrTooLarge):
		return "skipped: too large"
	case errors.Is(err, workspace.ErrBinary):
		return "skipped: not a text file"
	case errors.Is(err, fs.ErrNotExist):
		return "not found"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
