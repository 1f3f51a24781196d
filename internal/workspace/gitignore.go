package workspace

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Git-ignore rules are read by baton itself rather than asked of git: git
// run in a workspace reads the repository's configuration, and a
// core.fsmonitor there is a command git runs. The reading covers what
// decides the common cases: the .gitignore files from the workspace root
// down to the written path and the root's .git/info/exclude, with git's
// pattern syntax (negation, a trailing "/" for folders, anchoring by an
// inner "/", "**"), last match winning and a folder's rules overriding
// its parents'. It does not read .gitignore files above the workspace root,
// the user's global excludes file (core.excludesFile) or a worktree's
// exclude file; those only make git ignore more, so a path they alone
// ignore is written as if it were not ignored. A .gitignore that is a
// symlink is not read, as git does not read one.

// maxIgnoreFile bounds the bytes read of one ignore file.
const maxIgnoreFile = 1 << 20

// ignoreRule is one pattern line of an ignore file in folder base ("" for
// the workspace root).
type ignoreRule struct {
	base     string
	glob     string
	negate   bool
	dirOnly  bool
	anchored bool // holds a "/" before its end: matched from base, not at any depth
}

// matches reports whether the rule matches p (workspace-relative, under
// r.base); isDir says whether p is a folder.
func (r ignoreRule) matches(p string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	sub := p
	if r.base != "" {
		sub = strings.TrimPrefix(p, r.base+"/")
	}
	if !r.anchored {
		sub = sub[strings.LastIndexByte(sub, '/')+1:]
	}
	ok, _ := doublestar.Match(r.glob, sub)
	return ok
}

// parseIgnore reads the rules of one ignore file in folder base.
func parseIgnore(data []byte, base string) []ignoreRule {
	var out []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		// Trailing spaces are dropped unless a backslash escapes one.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		r.anchored = strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		r.glob = escapeBraces(line)
		if !doublestar.ValidatePattern(r.glob) {
			continue // git matches nothing with a pattern it cannot read either
		}
		out = append(out, r)
	}
	return out
}

// escapeBraces makes "{" and "}" literal, as they are in git's patterns;
// doublestar would take them for alternatives.
func escapeBraces(p string) string {
	if !strings.ContainsAny(p, "{}") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
		case c == '{' || c == '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// readIgnore returns the rules of the file name in dir, or none when it is
// missing, not a regular file (a symlink included) or unreadable.
func readIgnore(dir *os.Root, name, base string) []ignoreRule {
	fi, err := dir.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := openFile(dir, name, fi)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parseIgnore(data, base)
}

// ignored returns the shortest folder on the path clean (from cleanPath)
// that git ignores; "" when none is. The file itself is not
// asked about: an ignored file holds no tool's code the way an ignored
// .venv or node_modules does. The walk stops at the first ignored folder,
// as git does: what lies below it cannot be taken back by a negation. Folders are opened one
// through the other, so the walk is linear in the path's depth.
func (w *Workspace) ignored(clean string) string {
	var rules []ignoreRule
	if gitDir, err := w.root.OpenRoot(".git"); err == nil {
		rules = readIgnore(gitDir, "info/exclude", "")
		gitDir.Close()
	}
	dir, owned := w.root, false
	defer func() {
		if owned {
			dir.Close()
		}
	}()
	base := "" // the folder dir is, as a prefix of clean
	for start := 0; start < len(clean); {
		end := strings.IndexByte(clean[start:], '/')
		isDir := end >= 0
		if isDir {
			end += start
		} else {
			end = len(clean)
		}
		if !isDir {
			break // an ignored file is not a folder a tool keeps what it runs in
		}
		if dir != nil {
			rules = append(rules, readIgnore(dir, ".gitignore", base)...)
		}
		prefix := clean[:end]
		hit := false
		for _, r := range rules {
			if r.matches(prefix, true) {
				hit = !r.negate
			}
		}
		if hit {
			return prefix
		}
		// A folder that does not exist yet holds no ignore file, but the
		// rules read so far still apply below it.
		var sub *os.Root
		if dir != nil {
			sub, _ = dir.OpenRoot(clean[start:end])
		}
		if owned {
			dir.Close()
		}
		dir, owned = sub, sub != nil
		base, start = prefix, end+1
	}
	return ""
}
